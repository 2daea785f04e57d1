package rag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/llmgw"
)

// A model assigned to a role makes the role's work better or does not do it: when
// it cannot be called, or its call fails, or what it answers cannot be used, the
// builtin extractive method does the work instead and the result carries a
// Fallback naming the role, the model and the cause. Answers stream it in their
// done marker; summaries and extractions store it with themselves.

// Failures of a model's answer that a call does not report as errors.
var (
	errEmptyAnswer = errors.New("rag: the model's answer is empty")
	errRefused     = errors.New("rag: the model refused to answer")
	errNoCitations = errors.New("rag: the model's answer cites only passages it was not given")
	errEmptyWork   = errors.New("rag: the model's answer holds nothing")
)

// outputFailure says in a clause what was wrong with what a model answered, or ""
// when err is not about its answer.
func outputFailure(err error) string {
	switch {
	case errors.Is(err, errEmptyAnswer), errors.Is(err, errEmptyWork):
		return "it returned an empty answer"
	case errors.Is(err, errRefused):
		return "it refused to answer"
	case errors.Is(err, errNoCitations):
		return "its answer cited only passages it had not been given"
	case errors.Is(err, errUnreadable), strings.Contains(err.Error(), "not JSON"):
		return "its answer was not the JSON asked for and could not be read"
	}
	return ""
}

// fallbackWork names what the builtin method made in place of the model's work,
// as the start of a sentence.
func fallbackWork(role string) string {
	switch role {
	case llmgw.RoleSummarize:
		return "This summary comes"
	case llmgw.RoleExtract:
		return "These items come"
	case llmgw.RoleCards:
		return "These card drafts come"
	case llmgw.RoleRelevance:
		return "This judgement comes"
	}
	return "This answer comes"
}

// withFallback runs work with the binding of role. When the role's model cannot
// be resolved, or work fails with it for any reason but the caller's context
// ending, work runs again with the builtin plugin's binding and the Fallback says
// why. A role served by the builtin plugin gets no second try.
func (s *Service) withFallback(ctx context.Context, role string, work func(b *llmgw.Binding) error) (*llmgw.Binding, *Fallback, error) {
	b, err := s.GW.Resolve(ctx, role)
	if err == nil {
		err = work(b)
		if err == nil || b.Provider == llmgw.Builtin || ctx.Err() != nil {
			return b, nil, err
		}
		return s.fallBack(ctx, role, s.fallback(ctx, role, b.Provider, b.Assigned, b.Endpoint(), err), err, work)
	}
	if ctx.Err() != nil {
		return nil, nil, err
	}
	a, aerr := s.GW.Assignment(ctx, role)
	if aerr != nil || a.Provider == llmgw.Builtin {
		return nil, nil, err
	}
	return s.fallBack(ctx, role, s.fallback(ctx, role, a.Provider, a.Model, "", err), err, work)
}

// fallBack runs work with the builtin binding of role; cause is the assigned
// model's error, returned when the builtin plugin is not there either.
func (s *Service) fallBack(ctx context.Context, role string, fb *Fallback, cause error, work func(b *llmgw.Binding) error) (*llmgw.Binding, *Fallback, error) {
	builtin, err := s.GW.Fallback(role)
	if err != nil {
		return nil, nil, cause
	}
	if err := work(builtin); err != nil {
		return builtin, fb, err
	}
	return builtin, fb, nil
}

// workError is the job error of a summary or an extraction that neither the
// assigned model nor the builtin method could make: a sentence for its owner, so
// the job never ends in a bare failure. An error that already is one, or the
// job's context ending, is returned as it is.
func workError(ctx context.Context, work string, err error) error {
	var pe *jobs.PublicError
	if errors.As(err, &pe) || ctx.Err() != nil {
		return err
	}
	code := "model_failed"
	if outputFailure(err) != "" {
		code = "bad_model_output"
	}
	return jobs.NewPublicError(code, fmt.Sprintf("The %s could not be made: %s. Try again, or ask an admin to check Settings → Language models.",
		work, modelFailure(err)), err)
}

// fallbackJSON is fb as the fallback column stores it: NULL when there is none.
func fallbackJSON(fb *Fallback) any {
	if fb == nil {
		return nil
	}
	return fb
}
