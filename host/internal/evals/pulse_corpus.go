package evals

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The corpus of `lectern eval pulse`: real records from the shared fixture
// recordings (Semantic Scholar, arXiv, PubMed, OpenAlex, Crossref), read where they
// lie and never copied, plus papers generated from topic vocabularies with the
// run's seed. Every paper has a cluster: the field or category its source gave it,
// or the topic it was generated from. The simulated user's taste is drawn from
// these clusters, never from the embedding Lectern scores with.

// simPaper is one paper of the corpus.
type simPaper struct {
	Title, Abstract string
	Authors         []string
	// Cluster is its topic cluster; Source where it came from ("generated" or a
	// fixture's source).
	Cluster, Source string
	// realDate orders the fixture papers before they are put on the simulated
	// calendar (YYYY-MM-DD, or a prefix of it).
	realDate string
	// Day is the simulated day it is published on: negative days come before the
	// first deck (the user's library is seeded from them).
	Day int
}

// fixturePapers reads the papers with a title and an abstract from the fixture
// recordings under dir.
func fixturePapers(dir string) ([]simPaper, error) {
	if dir == "" {
		return nil, errors.New("the shared fixtures folder was not found: pass --fixtures DIR or set LECTERN_FIXTURES (the Pulse corpus is built from its recorded API responses)")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the fixtures folder %s was not found: pass --fixtures DIR or set LECTERN_FIXTURES to the shared fixtures folder", dir)
	}
	readers := []func(string) ([]simPaper, error){s2Papers, arxivPapers, pubmedPapers, openalexPapers, crossrefPapers}
	var out []simPaper
	for _, read := range readers {
		ps, err := read(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	// The same paper recorded twice (arXiv pages overlap) counts once.
	seen := map[string]bool{}
	out = slices.DeleteFunc(out, func(p simPaper) bool {
		k := strings.ToLower(strings.Join(strings.Fields(p.Title), " "))
		if seen[k] || strings.TrimSpace(p.Abstract) == "" || strings.TrimSpace(p.Title) == "" {
			return true
		}
		seen[k] = true
		return false
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("no paper with a title and an abstract was found in the fixtures folder %s", dir)
	}
	return out, nil
}

func readFixture(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("read the fixture %s: %w", name, err)
	}
	if strings.HasSuffix(name, ".xml") {
		err = xml.Unmarshal(b, v)
	} else {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("read the fixture %s: %w", name, err)
	}
	return nil
}

type s2Record struct {
	Title           string `json:"title"`
	Abstract        string `json:"abstract"`
	PublicationDate string `json:"publicationDate"`
	Authors         []struct {
		Name string `json:"name"`
	} `json:"authors"`
	Fields []struct {
		Category string `json:"category"`
	} `json:"s2FieldsOfStudy"`
}

func (r s2Record) paper() simPaper {
	p := simPaper{Title: r.Title, Abstract: r.Abstract, realDate: r.PublicationDate, Source: "semanticscholar", Cluster: "Other"}
	for _, a := range r.Authors {
		p.Authors = append(p.Authors, a.Name)
	}
	if len(r.Fields) > 0 {
		p.Cluster = r.Fields[0].Category
	}
	return p
}

// s2Papers reads the papers citing and cited by the recorded paper, and the
// recorded author's papers.
func s2Papers(dir string) ([]simPaper, error) {
	var paper struct {
		s2Record
		Citations  []s2Record `json:"citations"`
		References []s2Record `json:"references"`
	}
	if err := readFixture(dir, "semanticscholar/details_Paper.json", &paper); err != nil {
		return nil, err
	}
	var author struct {
		Papers []s2Record `json:"papers"`
	}
	if err := readFixture(dir, "semanticscholar/details_Author.json", &author); err != nil {
		return nil, err
	}
	var out []simPaper
	for _, r := range slices.Concat(paper.Citations, paper.References, author.Papers) {
		out = append(out, r.paper())
	}
	return out, nil
}

// arxivPapers reads the entries of the recorded arXiv API answers.
func arxivPapers(dir string) ([]simPaper, error) {
	files, err := filepath.Glob(filepath.Join(dir, "arxiv", "*.xml"))
	if err != nil {
		return nil, err
	}
	var out []simPaper
	for _, f := range files {
		var feed struct {
			Entries []struct {
				Title     string `xml:"title"`
				Summary   string `xml:"summary"`
				Published string `xml:"published"`
				Authors   []struct {
					Name string `xml:"name"`
				} `xml:"author"`
				Primary struct {
					Term string `xml:"term,attr"`
				} `xml:"primary_category"`
			} `xml:"entry"`
		}
		rel, _ := filepath.Rel(dir, f)
		if err := readFixture(dir, rel, &feed); err != nil {
			return nil, err
		}
		for _, e := range feed.Entries {
			if e.Title == "Error" {
				continue
			}
			p := simPaper{Title: e.Title, Abstract: e.Summary, realDate: e.Published, Source: "arxiv", Cluster: "arXiv " + e.Primary.Term}
			for _, a := range e.Authors {
				p.Authors = append(p.Authors, a.Name)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// pubmedPapers reads the articles of the recorded PubMed fetches.
func pubmedPapers(dir string) ([]simPaper, error) {
	files, err := filepath.Glob(filepath.Join(dir, "pubmed", "efetch_*.xml"))
	if err != nil {
		return nil, err
	}
	var out []simPaper
	for _, f := range files {
		var set struct {
			Articles []struct {
				Title    string   `xml:"MedlineCitation>Article>ArticleTitle"`
				Abstract []string `xml:"MedlineCitation>Article>Abstract>AbstractText"`
				Year     string   `xml:"MedlineCitation>Article>Journal>JournalIssue>PubDate>Year"`
				Authors  []struct {
					Last  string `xml:"LastName"`
					First string `xml:"ForeName"`
				} `xml:"MedlineCitation>Article>AuthorList>Author"`
			} `xml:"PubmedArticle"`
		}
		rel, _ := filepath.Rel(dir, f)
		if err := readFixture(dir, rel, &set); err != nil {
			return nil, err
		}
		for _, a := range set.Articles {
			p := simPaper{Title: a.Title, Abstract: strings.Join(a.Abstract, " "), realDate: a.Year, Source: "pubmed", Cluster: "Medicine"}
			for _, au := range a.Authors {
				p.Authors = append(p.Authors, strings.TrimSpace(au.First+" "+au.Last))
			}
			out = append(out, p)
		}
	}
	return out, nil
}

type openalexWork struct {
	Title    string           `json:"title"`
	Date     string           `json:"publication_date"`
	Inverted map[string][]int `json:"abstract_inverted_index"`
	Authors  []struct {
		Author struct {
			Name string `json:"display_name"`
		} `json:"author"`
	} `json:"authorships"`
	Topic *struct {
		Field struct {
			Name string `json:"display_name"`
		} `json:"field"`
	} `json:"primary_topic"`
}

// openalexPapers reads the recorded OpenAlex works, their abstracts rebuilt from
// the inverted index.
func openalexPapers(dir string) ([]simPaper, error) {
	files, err := filepath.Glob(filepath.Join(dir, "openalex", "works_*.json"))
	if err != nil {
		return nil, err
	}
	var out []simPaper
	for _, f := range files {
		var page struct {
			openalexWork
			Results []openalexWork `json:"results"`
		}
		rel, _ := filepath.Rel(dir, f)
		if err := readFixture(dir, rel, &page); err != nil {
			return nil, err
		}
		for _, w := range append(page.Results, page.openalexWork) {
			p := simPaper{Title: w.Title, Abstract: uninvert(w.Inverted), realDate: w.Date, Source: "openalex", Cluster: "Other"}
			if w.Topic != nil && w.Topic.Field.Name != "" {
				p.Cluster = w.Topic.Field.Name
			}
			for _, a := range w.Authors {
				p.Authors = append(p.Authors, a.Author.Name)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// uninvert rebuilds a text from OpenAlex's word → positions index.
func uninvert(index map[string][]int) string {
	var words []string
	for w, pos := range index {
		for _, i := range pos {
			for len(words) <= i {
				words = append(words, "")
			}
			words[i] = w
		}
	}
	return strings.Join(strings.Fields(strings.Join(words, " ")), " ")
}

var jatsTag = regexp.MustCompile(`<[^>]+>`)

// crossrefPapers reads the recorded Crossref works that carry an abstract (JATS,
// its tags dropped).
func crossrefPapers(dir string) ([]simPaper, error) {
	files, err := filepath.Glob(filepath.Join(dir, "crossref", "*.json"))
	if err != nil {
		return nil, err
	}
	type work struct {
		Title    []string `json:"title"`
		Abstract string   `json:"abstract"`
		Subject  []string `json:"subject"`
		Issued   struct {
			Parts [][]int `json:"date-parts"`
		} `json:"issued"`
		Authors []struct {
			Given  string `json:"given"`
			Family string `json:"family"`
		} `json:"author"`
	}
	var out []simPaper
	for _, f := range files {
		var body struct {
			Message json.RawMessage `json:"message"`
		}
		rel, _ := filepath.Rel(dir, f)
		if err := readFixture(dir, rel, &body); err != nil {
			return nil, err
		}
		var one work
		var list struct {
			Items []work `json:"items"`
		}
		// A message is one work or a list of them; whichever does not fit stays empty.
		_ = json.Unmarshal(body.Message, &one)
		_ = json.Unmarshal(body.Message, &list)
		for _, w := range append(list.Items, one) {
			if len(w.Title) == 0 || w.Abstract == "" {
				continue
			}
			p := simPaper{Title: w.Title[0], Abstract: strings.Join(strings.Fields(jatsTag.ReplaceAllString(w.Abstract, " ")), " "),
				Source: "crossref", Cluster: "Other"}
			if len(w.Subject) > 0 {
				p.Cluster = w.Subject[0]
			}
			if len(w.Issued.Parts) > 0 && len(w.Issued.Parts[0]) > 0 {
				p.realDate = fmt.Sprintf("%04d", w.Issued.Parts[0][0])
			}
			for _, a := range w.Authors {
				p.Authors = append(p.Authors, strings.TrimSpace(a.Given+" "+a.Family))
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// placeOnCalendar spreads the fixture papers over the simulated days first..last
// in the order of their real dates (their years span decades; the simulation
// spans weeks), so the newest recordings are the newest papers.
func placeOnCalendar(ps []simPaper, first, last int) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].realDate < ps[j].realDate })
	span := last - first + 1
	for i := range ps {
		ps[i].Day = first + i*span/len(ps)
	}
}

// simTopic is a topic the generator writes papers about.
type simTopic struct {
	Name  string
	Terms []string
}

// simTopics are the generated papers' topics: each a vocabulary of its own, some
// sharing words with a neighbour (graphs, networks, models) so that words alone do
// not separate them.
var simTopics = []simTopic{
	{"Graph neural networks", []string{"graph neural network", "message passing", "node classification", "link prediction", "graph convolution", "over-smoothing", "heterophily", "graph attention", "molecular graphs", "subgraph", "spectral filters", "graph pooling"}},
	{"Protein structure", []string{"protein folding", "structure prediction", "amino acid", "residue contacts", "cryo-EM", "binding pocket", "protein design", "multiple sequence alignment", "backbone", "side chain", "folding kinetics", "enzyme"}},
	{"Reinforcement learning", []string{"reinforcement learning", "policy gradient", "reward shaping", "value function", "exploration", "offline RL", "actor-critic", "Markov decision process", "sample efficiency", "Q-learning", "model-based planning", "return"}},
	{"Quantum error correction", []string{"quantum error correction", "surface code", "logical qubit", "stabilizer", "decoder", "fault tolerance", "syndrome measurement", "threshold", "magic state", "qubit noise", "lattice surgery", "erasure"}},
	{"Climate modelling", []string{"climate model", "precipitation", "sea surface temperature", "downscaling", "carbon cycle", "ensemble projections", "aerosols", "ocean circulation", "heatwaves", "reanalysis", "radiative forcing", "monsoon"}},
	{"Epidemiology", []string{"epidemic", "transmission", "incidence", "cohort study", "vaccination", "reproduction number", "contact tracing", "mortality", "seroprevalence", "outbreak", "surveillance", "infection"}},
	{"Speech recognition", []string{"speech recognition", "acoustic model", "word error rate", "phoneme", "spectrogram", "speaker adaptation", "end-to-end ASR", "language model", "transducer", "low-resource languages", "audio", "utterance"}},
	{"Robot manipulation", []string{"robot manipulation", "grasping", "tactile sensing", "motion planning", "dexterous hand", "imitation learning", "sim-to-real", "end effector", "pick and place", "trajectory", "contact-rich", "teleoperation"}},
	{"Dark matter", []string{"dark matter", "galaxy rotation curves", "weak lensing", "halo", "axion", "direct detection", "cosmological simulation", "WIMP", "structure formation", "baryonic feedback", "N-body", "relic density"}},
	{"Battery materials", []string{"lithium-ion battery", "cathode", "solid electrolyte", "capacity fade", "anode", "ionic conductivity", "cycling stability", "dendrite", "electrochemical impedance", "sodium-ion", "interphase", "energy density"}},
	{"Causal inference", []string{"causal inference", "treatment effect", "confounding", "instrumental variable", "propensity score", "counterfactual", "identification", "causal graph", "randomized trial", "mediation", "observational data", "sensitivity analysis"}},
	{"Image segmentation", []string{"image segmentation", "semantic segmentation", "convolutional network", "pixel labels", "encoder-decoder", "instance masks", "medical images", "annotation", "boundary", "vision transformer", "data augmentation", "segmentation network"}},
}

// generic are the words any abstract may use.
var (
	genericOpeners = []string{"We study", "We propose", "This paper examines", "We present", "We revisit", "We introduce", "Here we analyse", "We investigate"}
	genericMiddles = []string{"a simple and scalable method for", "the limits of current approaches to", "a new benchmark for", "an empirical comparison of methods for", "a theoretical analysis of", "a large dataset of", "the role of uncertainty in", "efficient algorithms for"}
	genericResults = []string{"Experiments show consistent improvements over strong baselines.", "Our results suggest a trade-off between accuracy and cost.", "We release code and data to support further work.", "The analysis reveals failure modes that earlier work missed.", "Results hold across several datasets and settings.", "We discuss limitations and open questions."}
	firstNames     = []string{"Ana", "Bo", "Chen", "Dara", "Emil", "Fatima", "Goran", "Hana", "Ivo", "Jia", "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara"}
	lastNames      = []string{"Abe", "Brandt", "Costa", "Dubois", "Eriksen", "Fujita", "Garcia", "Haddad", "Ilic", "Jensen", "Kowalski", "Li", "Moreau", "Novak", "Okafor", "Petrov", "Quispe", "Rossi", "Sato", "Tanaka", "Umar", "Varga", "Wang", "Zhou"}
)

// generatePapers writes n papers per day for the days first..last, each about one
// of simTopics with a share of words from another topic, by authors drawn from a
// pool of the topic's own.
func generatePapers(rng *rand.Rand, perDay, first, last int) []simPaper {
	authors := make([][]string, len(simTopics))
	for t := range simTopics {
		for range 12 {
			authors[t] = append(authors[t], firstNames[rng.IntN(len(firstNames))]+" "+lastNames[rng.IntN(len(lastNames))])
		}
	}
	var out []simPaper
	for day := first; day <= last; day++ {
		for range perDay {
			t := rng.IntN(len(simTopics))
			other := rng.IntN(len(simTopics))
			out = append(out, generatePaper(rng, simTopics[t], simTopics[other], authors[t], day))
		}
	}
	return out
}

func generatePaper(rng *rand.Rand, topic, other simTopic, pool []string, day int) simPaper {
	pick := func(ts []string) string { return ts[rng.IntN(len(ts))] }
	term := func() string {
		// One word in five is the other topic's: papers straddle fields.
		if rng.IntN(5) == 0 {
			return pick(other.Terms)
		}
		return pick(topic.Terms)
	}
	first := term()
	title := strings.ToUpper(first[:1]) + first[1:] + " and " + term() + ": " + pick(genericMiddles) + " " + term()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s. ", pick(genericOpeners), pick(genericMiddles), term())
	for range 2 + rng.IntN(3) {
		fmt.Fprintf(&b, "We relate %s to %s and %s. ", term(), term(), term())
	}
	b.WriteString(pick(genericResults))
	n := 1 + rng.IntN(4)
	var names []string
	for range n {
		names = append(names, pick(pool))
	}
	return simPaper{Title: title, Abstract: b.String(), Authors: names, Cluster: topic.Name, Source: "generated", Day: day}
}

// query is the text a user who follows cluster would type as a topic: the
// generated topic's first terms, or the cluster's name.
func query(cluster string) string {
	for _, t := range simTopics {
		if t.Name == cluster {
			return strings.Join(t.Terms[:4], ", ")
		}
	}
	return cluster
}
