package refsync

import (
	"context"
	"errors"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// failureWords is what a run's status shows for err: what happened and what to do,
// in a sentence. The error itself (with the plugin's message, a driver's or the
// network's text) goes to the log; a user or an admin reads this.
func failureWords(err error) string {
	var pe *protocol.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "The sync was cut short before it finished; the next run goes on from where it stopped."
	case errors.As(err, &pe):
		switch pe.Code {
		case protocol.CodeUnauthorized:
			return "Zotero refused the API key for this library: check in Zotero that the key may read it, then save it again."
		case protocol.CodeNotFound:
			return "Zotero does not know this library: check its number in Settings."
		case protocol.CodeRateLimited:
			return "Zotero asked us to slow down; the next run tries again."
		case protocol.CodeUnavailable:
			return "Zotero could not be reached; the next run tries again."
		case protocol.CodeBadRequest:
			return "Zotero refused the request; check the library and the key in Settings."
		}
		return "The Zotero plugin failed; the next run tries again, and the server log has the details."
	}
	return "The sync failed on our side; the next run tries again, and the server log has the details."
}
