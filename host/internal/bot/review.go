package bot

import (
	"context"
	"fmt"
	"net/http"

	"github.com/lectern-research/lectern/sdk/messenger"
)

// reviewSession is a chat's review in progress: the card shown and how many
// were rated. It lives in memory; /cancel or /unpair ends it.
type reviewSession struct {
	cardID    string
	front     string
	back      string
	messageID string
	rated     int
}

type dueCard struct {
	ID    string `json:"id"`
	Front string `json:"front"`
	Back  string `json:"back"`
}

var rateButtons = [][]messenger.Button{{
	{Text: "Again", CallbackData: "rate_1"}, {Text: "Hard", CallbackData: "rate_2"},
	{Text: "Good", CallbackData: "rate_3"}, {Text: "Easy", CallbackData: "rate_4"},
}}

func (b *Bot) session(chatID string) *reviewSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reviews[chatID]
}

func (b *Bot) endReview(chatID string) *reviewSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.reviews[chatID]
	delete(b.reviews, chatID)
	return s
}

func cmdReview(ctx context.Context, b *Bot, c *chat, _ string) error {
	b.endReview(c.id)
	return b.nextCard(ctx, c, 0)
}

func cmdCancel(ctx context.Context, b *Bot, c *chat, _ string) error {
	s := b.endReview(c.id)
	if s == nil {
		return b.send(ctx, c.id, "No review is in progress.", nil)
	}
	return b.send(ctx, c.id, fmt.Sprintf("Review ended: %d cards rated.", s.rated), nil)
}

// nextCard shows the next due card's front with a Show answer button, or says
// the review is over.
func (b *Bot) nextCard(ctx context.Context, c *chat, rated int) error {
	var due struct {
		Items []dueCard `json:"items"`
	}
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, "/api/reviews/due?limit=1", nil, &due); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	if len(due.Items) == 0 {
		if rated > 0 {
			return b.send(ctx, c.id, fmt.Sprintf("All done: %d cards rated. No more cards are due.", rated), nil)
		}
		return b.send(ctx, c.id, "No cards are due. Well done.", nil)
	}
	card := due.Items[0]
	id, err := b.post(ctx, c.id, card.Front, [][]messenger.Button{{{Text: "Show answer", CallbackData: "show_answer"}}})
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.reviews[c.id] = &reviewSession{cardID: card.ID, front: card.Front, back: card.Back, messageID: id, rated: rated}
	b.mu.Unlock()
	return nil
}

// showAnswer turns the card's message over: front, back and the four ratings.
func (b *Bot) showAnswer(ctx context.Context, c *chat, cb *messenger.Callback) error {
	s := b.session(c.id)
	if s == nil {
		return b.answerCallback(ctx, cb.CallbackID, "No review is in progress. Send /review to start one.")
	}
	if err := b.answerCallback(ctx, cb.CallbackID, ""); err != nil {
		return err
	}
	return b.edit(ctx, c.id, s.messageID, s.front+"\n\n"+s.back, rateButtons)
}

// rate records the rating of the card shown and shows the next one.
func (b *Bot) rate(ctx context.Context, c *chat, cb *messenger.Callback, rating int) error {
	s := b.session(c.id)
	if s == nil {
		return b.answerCallback(ctx, cb.CallbackID, "No review is in progress. Send /review to start one.")
	}
	body := map[string]any{"card_id": s.cardID, "rating": rating}
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodPost, "/api/reviews", body, nil); err != nil {
		return b.answerCallback(ctx, cb.CallbackID, b.apiFailure(ctx, err))
	}
	if err := b.answerCallback(ctx, cb.CallbackID, "Rated "+rateButtons[0][rating-1].Text+"."); err != nil {
		return err
	}
	if err := b.edit(ctx, c.id, s.messageID, s.front+"\n\n"+s.back+"\n\nRated: "+rateButtons[0][rating-1].Text, nil); err != nil {
		return err
	}
	return b.nextCard(ctx, c, s.rated+1)
}
