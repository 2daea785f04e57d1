package bot

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxQuestion bounds /ask's question (the API takes up to 2,000 bytes).
const maxQuestion = 2000

type askCitation struct {
	Number   int    `json:"number"`
	PaperID  string `json:"paper_id"`
	ChunkID  string `json:"chunk_id"`
	Title    string `json:"title"`
	Page     int    `json:"page"`
	Verified bool   `json:"verified"`
}

// cmdAsk asks the API a question over the user's library and answers with the
// text and its sources, each linked to the page in the dashboard's reader.
func cmdAsk(ctx context.Context, b *Bot, c *chat, args string) error {
	if args == "" {
		return b.send(ctx, c.id, "Ask a question: /ask <question>.", nil)
	}
	if len(args) > maxQuestion {
		return b.send(ctx, c.id, "That question is too long: keep it under 2,000 characters.", nil)
	}
	body, err := b.cfg.API.Stream(ctx, c.pairing.UserID, http.MethodPost, "/api/rag/ask", map[string]string{"question": args, "scope": "library"})
	if err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	defer body.Close()
	answer, cites, failure := readAnswer(bufio.NewScanner(body))
	if failure != "" {
		return b.send(ctx, c.id, failure, nil)
	}
	if strings.TrimSpace(answer) == "" {
		return b.send(ctx, c.id, "Your papers hold no answer to that.", nil)
	}
	var sb strings.Builder
	sb.WriteString(strings.TrimSpace(answer))
	if len(cites) > 0 {
		sb.WriteString("\n\nSources:")
		for _, ct := range cites {
			mark := ""
			if !ct.Verified {
				mark = " (unverified)"
			}
			fmt.Fprintf(&sb, "\n[%d] %s, p. %d%s: %s", ct.Number, ct.Title, ct.Page, mark, b.readerLink(ct))
		}
	}
	return b.send(ctx, c.id, sb.String(), nil)
}

// readerLink is the dashboard reader at the cited page and passage.
func (b *Bot) readerLink(ct askCitation) string {
	q := url.Values{"page": {strconv.Itoa(max(ct.Page, 1))}, "passage": {ct.ChunkID}}
	return b.cfg.DashboardURL + "/papers/" + url.PathEscape(ct.PaperID) + "/read?" + q.Encode()
}

// readAnswer reads the answer's event stream: the text of its token events
// (a reset withdraws what came before), its citations, and the message of an
// error event.
func readAnswer(sc *bufio.Scanner) (string, []askCitation, string) {
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var (
		event  string
		answer strings.Builder
		cites  []askCitation
	)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data := []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			switch event {
			case "token":
				var t struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(data, &t) == nil {
					answer.WriteString(t.Text)
				}
			case "reset":
				answer.Reset()
			case "citations":
				var c struct {
					Citations []askCitation `json:"citations"`
				}
				if json.Unmarshal(data, &c) == nil {
					cites = c.Citations
				}
			case "error":
				var e struct {
					Message string `json:"message"`
				}
				if json.Unmarshal(data, &e) == nil && e.Message != "" {
					return "", nil, e.Message
				}
				return "", nil, "The answer failed; try again later."
			}
		case line == "":
			event = ""
		}
	}
	if sc.Err() != nil {
		return "", nil, unreachable
	}
	return answer.String(), cites, ""
}
