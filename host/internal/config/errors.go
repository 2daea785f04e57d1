package config

import (
	"slices"
	"strings"
)

// Error is one refusal found by [Load]: the variable at fault and the rule it
// broke. The rule never contains the value of a secret.
type Error struct {
	// Variable is the environment variable at fault, for example
	// "SERVICE_API_KEY" or "SERVICE_API_KEY_FILE".
	Variable string
	// Rule says what is wrong and, where useful, how to fix it.
	Rule string
	// Err is the underlying cause, if any (for example the error from
	// reading a _FILE variant). It is not part of the message.
	Err error
}

// Error returns exactly one line: "config: VARIABLE: rule".
func (e *Error) Error() string {
	return "config: " + e.Variable + ": " + oneLine(e.Rule)
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error {
	return e.Err
}

// Errors is every refusal found by one [Load] call, in option-table order.
// Use errors.As with a *[Error] target to get the first one, or with an
// Errors target to get them all.
type Errors []*Error

// Error joins the one-line messages of all errors with "\n".
func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, err := range e {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the individual errors, for errors.Is and errors.As.
func (e Errors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, err := range e {
		errs[i] = err
	}
	return errs
}

// Variables returns the variable named by each error, in order.
func (e Errors) Variables() []string {
	vars := make([]string, len(e))
	for i, err := range e {
		vars[i] = err.Variable
	}
	return vars
}

// oneLine keeps an error message on a single line whatever the rule holds.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// collector gathers refusals and sorts them into option-table order.
type collector struct {
	order map[string]int
	items []collected
}

type collected struct {
	pos int
	err *Error
}

func newCollector(opts []option) *collector {
	order := make(map[string]int, len(opts))
	for i, o := range opts {
		order[o.Name] = i
	}
	return &collector{order: order}
}

// add records a refusal. cause may be nil.
func (c *collector) add(variable, rule string, cause error) {
	pos, ok := c.order[variable]
	if !ok {
		pos, ok = c.order[strings.TrimSuffix(variable, fileSuffix)]
	}
	if !ok {
		pos = len(c.order)
	}
	c.items = append(c.items, collected{pos: pos, err: &Error{Variable: variable, Rule: rule, Err: cause}})
}

// result returns the sorted errors, or nil when there are none.
func (c *collector) result() error {
	if len(c.items) == 0 {
		return nil
	}
	slices.SortStableFunc(c.items, func(a, b collected) int { return a.pos - b.pos })
	errs := make(Errors, len(c.items))
	for i, it := range c.items {
		errs[i] = it.err
	}
	return errs
}
