package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
)

func TestPublicStateCoversEveryRiverState(t *testing.T) {
	t.Parallel()
	cases := []struct {
		river rivertype.JobState
		want  State
	}{
		{rivertype.JobStateAvailable, StateQueued},
		{rivertype.JobStateScheduled, StateQueued},
		{rivertype.JobStatePending, StateQueued},
		{rivertype.JobStateRunning, StateRunning},
		{rivertype.JobStateRetryable, StateRetrying},
		{rivertype.JobStateCompleted, StateSucceeded},
		{rivertype.JobStateDiscarded, StateFailed},
		{rivertype.JobStateCancelled, StateCancelled},
		{rivertype.JobState("from_a_newer_river"), StateQueued},
	}
	covered := map[rivertype.JobState]bool{}
	for _, tc := range cases {
		covered[tc.river] = true
		t.Run(string(tc.river), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, PublicState(tc.river))
		})
	}
	for _, s := range rivertype.JobStates() {
		require.True(t, covered[s], "River state %q has no case in this table", s)
	}
}

func TestRiverStatesInvertsPublicState(t *testing.T) {
	t.Parallel()
	seen := map[rivertype.JobState]State{}
	for _, public := range States() {
		rs := riverStates(public)
		require.NotEmpty(t, rs, "public state %s covers some River state", public)
		for _, s := range rs {
			require.Equal(t, public, PublicState(s))
			seen[s] = public
		}
	}
	require.Len(t, seen, len(rivertype.JobStates()), "every River state is listed under exactly one public state")
}

func TestTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		state    State
		terminal bool
	}{
		{StateQueued, false}, {StateRunning, false}, {StateRetrying, false},
		{StateSucceeded, true}, {StateFailed, true}, {StateCancelled, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.state), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.terminal, tc.state.Terminal())
		})
	}
}

func TestParseState(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []State
		err  bool
	}{
		{"queued", []State{StateQueued}, false},
		{"failed", []State{StateFailed}, false},
		{"active", []State{StateQueued, StateRunning, StateRetrying}, false},
		{"completed", nil, true}, // River's word, not ours
		{"", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := parseState(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestEnqueuerAllows(t *testing.T) {
	t.Parallel()
	user := auth.Caller{UserID: uuid.New(), Role: auth.RoleUser, SessionID: uuid.New()}
	admin := auth.Caller{UserID: uuid.New(), Role: auth.RoleAdmin, SessionID: uuid.New()}
	override := auth.Caller{UserID: uuid.New(), Role: auth.RoleAdmin, OpsKey: true, Override: true}
	ops := auth.Caller{OpsKey: true}
	cases := []struct {
		name   string
		e      Enqueuer
		caller auth.Caller
		want   bool
	}{
		{"user kind, user", EnqueueUser, user, true},
		{"user kind, admin", EnqueueUser, admin, true},
		{"user kind, ops for a user", EnqueueUser, override, true},
		{"user kind, ops alone", EnqueueUser, ops, false},
		{"admin kind, user", EnqueueAdmin, user, false},
		{"admin kind, admin", EnqueueAdmin, admin, true},
		{"admin kind, ops for an admin is no admin", EnqueueAdmin, override, false},
		{"ops kind, ops alone", EnqueueOps, ops, true},
		{"ops kind, ops for a user", EnqueueOps, override, true},
		{"ops kind, admin session", EnqueueOps, admin, false},
		{"internal kind, admin", 0, admin, false},
		{"internal kind, ops", 0, ops, false},
		{"anyone, anonymous", EnqueueUser | EnqueueAdmin | EnqueueOps, auth.Caller{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.e.allows(tc.caller))
		})
	}
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want int64
		err  bool
	}{
		{"ours", encodeCursor(1234), 1234, false},
		{"not base64", "!!", 0, true},
		{"no prefix", "MTIz", 0, true},
		{"zero", encodeCursor(0), 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeCursor(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDailyAtNext(t *testing.T) {
	t.Parallel()
	d := dailyAt{hour: 3, minute: 30}
	cases := []struct {
		now, want string
	}{
		{"2026-03-01T00:00:00Z", "2026-03-01T03:30:00Z"},
		{"2026-03-01T03:29:59Z", "2026-03-01T03:30:00Z"},
		{"2026-03-01T03:30:00Z", "2026-03-02T03:30:00Z"},
		{"2026-12-31T23:00:00Z", "2027-01-01T03:30:00Z"},
		{"2026-03-01T05:00:00+05:00", "2026-03-01T03:30:00Z"}, // 00:00 UTC: the time is read in UTC
	}
	for _, tc := range cases {
		t.Run(tc.now, func(t *testing.T) {
			t.Parallel()
			now, err := time.Parse(time.RFC3339, tc.now)
			require.NoError(t, err)
			want, err := time.Parse(time.RFC3339, tc.want)
			require.NoError(t, err)
			require.True(t, want.Equal(d.Next(now)), "got %s", d.Next(now))
		})
	}
}

func TestUserDailyDueDate(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	newYork, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	morning := UserDaily{Name: "briefing", Hour: 7, Minute: 30}
	lateNight := UserDaily{Name: "late", Hour: 23, Minute: 50}
	mondays := UserDaily{Name: "weekly", Hour: 9, Minute: 0, Weekdays: []time.Weekday{time.Monday}}

	cases := []struct {
		name     string
		schedule UserDaily
		now      string
		loc      *time.Location
		date     string
		due      bool
	}{
		{"Tokyo just after 07:30", morning, "2026-03-01T22:31:00Z", tokyo, "2026-03-02", true},
		{"Tokyo just before 07:30", morning, "2026-03-01T22:29:00Z", tokyo, "", false},
		{"Tokyo an hour late is skipped", morning, "2026-03-01T23:30:00Z", tokyo, "", false},
		{"same instant in New York is not due", morning, "2026-03-01T22:31:00Z", newYork, "", false},
		{"New York 07:30 EST", morning, "2026-03-02T12:31:00Z", newYork, "2026-03-02", true},
		{"New York 07:30 EDT after the clocks change", morning, "2026-03-09T11:31:00Z", newYork, "2026-03-09", true},
		{"UTC exactly on time", morning, "2026-03-02T07:30:00Z", time.UTC, "2026-03-02", true},
		{"run just before midnight is due after midnight", lateNight, "2026-03-02T00:05:00Z", time.UTC, "2026-03-01", true},
		{"weekly on a Monday", mondays, "2026-03-02T09:10:00Z", time.UTC, "2026-03-02", true},
		{"weekly not on a Tuesday", mondays, "2026-03-03T09:10:00Z", time.UTC, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now, err := time.Parse(time.RFC3339, tc.now)
			require.NoError(t, err)
			date, due := tc.schedule.dueDate(now, tc.loc, userScheduleGrace)
			require.Equal(t, tc.due, due)
			require.Equal(t, tc.date, date)
		})
	}
}

func TestDueDeliveriesFallsBackToUTC(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 7, 40, 0, 0, time.UTC)
	good, bad := uuid.New(), uuid.New()
	users := []userZone{{ID: good, Timezone: "Asia/Tokyo"}, {ID: bad, Timezone: "Mars/Olympus_Mons"}}
	schedules := []UserDaily{{Name: "briefing", Hour: 7, Minute: 30}}
	var badZones []string
	due := dueDeliveries(now, users, schedules, nil, userScheduleGrace, func(_ uuid.UUID, zone string) {
		badZones = append(badZones, zone)
	})
	require.Equal(t, []string{"Mars/Olympus_Mons"}, badZones)
	require.Len(t, due, 1, "07:40 UTC is 16:40 in Tokyo: only the UTC fallback user is due")
	require.Equal(t, bad, due[0].user)
	require.Equal(t, "2026-03-02", due[0].localDate)
}

func TestAScheduleWithOnlyRunsForItsUsersAlone(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 9, 10, 0, 0, time.UTC)
	ann, bob := uuid.New(), uuid.New()
	users := []userZone{{ID: ann, Timezone: "UTC"}, {ID: bob, Timezone: "UTC"}}
	schedules := []UserDaily{{Name: "sync 09:00", Hour: 9}, {Name: "briefing", Hour: 9}}
	due := dueDeliveries(now, users, schedules, nil, userScheduleGrace, nil)
	require.Len(t, due, 4)
	kept := keepOnly(due, map[*UserDaily]map[uuid.UUID]bool{&schedules[0]: {ann: true}})
	var names []string
	for _, d := range kept {
		names = append(names, d.schedule.Name+" "+map[uuid.UUID]string{ann: "ann", bob: "bob"}[d.user])
	}
	require.ElementsMatch(t, []string{"sync 09:00 ann", "briefing ann", "briefing bob"}, names)
}

func TestScheduleUserDailyValidates(t *testing.T) {
	t.Parallel()
	argsFunc := func(uuid.UUID, string) river.JobArgs { return TrainClassifierArgs{} }
	cases := []struct {
		name string
		s    UserDaily
		err  string
	}{
		{"no name", UserDaily{Hour: 1, ArgsFunc: argsFunc}, "name is required"},
		{"bad hour", UserDaily{Name: "x", Hour: 24, ArgsFunc: argsFunc}, "not a time of day"},
		{"bad minute", UserDaily{Name: "x", Minute: -1, ArgsFunc: argsFunc}, "not a time of day"},
		{"no args", UserDaily{Name: "x"}, "ArgsFunc is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.ErrorContains(t, NewRegistry().ScheduleUserDaily(tc.s), tc.err)
		})
	}
	reg := NewRegistry()
	require.NoError(t, reg.ScheduleUserDaily(UserDaily{Name: "x", ArgsFunc: argsFunc}))
	require.ErrorContains(t, reg.ScheduleUserDaily(UserDaily{Name: "x", ArgsFunc: argsFunc}), "already added")
}

type noopWorker[T river.JobArgs] struct{ river.WorkerDefaults[T] }

func (noopWorker[T]) Work(context.Context, *river.Job[T]) error { return nil }

type badKindArgs struct{}

func (badKindArgs) Kind() string { return "NoDots" }

func TestRegisterValidates(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	require.ErrorContains(t, Register(reg, KindSpec[badKindArgs]{Worker: noopWorker[badKindArgs]{}}), "dotted lowercase")
	require.ErrorContains(t, Register(reg, KindSpec[PurgeArgs]{}), "no worker")
	require.NoError(t, Register(reg, KindSpec[PurgeArgs]{Worker: noopWorker[PurgeArgs]{}}))
	require.ErrorContains(t, Register(reg, KindSpec[PurgeArgs]{Worker: noopWorker[PurgeArgs]{}}), "already registered")
	require.Equal(t, []string{KindPurge}, reg.Kinds())
	k, ok := reg.lookup(KindPurge)
	require.True(t, ok)
	require.Equal(t, QueueDefault, k.queue)
	require.Equal(t, DefaultMaxAttempts, k.maxAttempts)
	require.Equal(t, DefaultTimeout, k.timeout)
}

type pointerValidated struct {
	N int `json:"n"`
}

func (pointerValidated) Kind() string { return "test.pointer" }

func (p *pointerValidated) ValidateArgs() error {
	if p.N < 0 {
		return errors.New("n must not be negative")
	}
	return nil
}

func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		raw    string
		want   pointerValidated
		fields []FieldError
	}{
		{"absent", ``, pointerValidated{}, nil},
		{"null", `null`, pointerValidated{}, nil},
		{"value", `{"n": 4}`, pointerValidated{N: 4}, nil},
		{"unknown field", `{"m": 1}`, pointerValidated{}, []FieldError{{"args.m", "is not an argument of this kind"}}},
		{"wrong type", `{"n": "4"}`, pointerValidated{}, []FieldError{{"args.n", "must be an integer"}}},
		{"trailing data", `{"n": 1} {"n": 2}`, pointerValidated{}, []FieldError{{"args", "must be one JSON object"}}},
		{"validator on pointer receiver, plain error", `{"n": -1}`, pointerValidated{}, []FieldError{{"args", "n must not be negative"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeArgs[pointerValidated](json.RawMessage(tc.raw))
			if tc.fields != nil {
				var argsErr *ArgsError
				require.ErrorAs(t, err, &argsErr)
				require.Equal(t, tc.fields, argsErr.Fields)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestPublicErrorOf(t *testing.T) {
	t.Parallel()
	timedOut, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	remote, cancelRemote := context.WithCancelCause(context.Background())
	cancelRemote(rivertype.ErrJobCancelledRemotely)
	stopping, cancelStop := context.WithCancel(context.Background())
	cancelStop()
	public := NewPublicError("quota", "The provider's quota is used up.", errors.New("429 from api.example"))

	cases := []struct {
		name  string
		ctx   context.Context
		err   error
		want  *ErrorInfo
		final bool // on the last attempt
	}{
		{"success", context.Background(), nil, nil, false},
		{"internal error", context.Background(), errors.New("pq: secret"), &ErrorInfo{CodeJobFailed, "Job failed"}, true},
		{"public error", context.Background(), fmt.Errorf("wrapped: %w", public), &ErrorInfo{"quota", "The provider's quota is used up."}, true},
		{"timeout", timedOut, timedOut.Err(), &ErrorInfo{CodeJobTimeout, "The job ran longer than its time limit."}, true},
		{"cancelled remotely", remote, remote.Err(), nil, false},
		{"client stopping", stopping, stopping.Err(), nil, false},
		{"snoozed", context.Background(), river.JobSnooze(time.Minute), nil, false},
		{"cancelled by the worker", context.Background(), river.JobCancel(errors.New("no longer needed")), nil, false},
		{"cancelled by the worker with a reason", context.Background(), river.JobCancel(public), &ErrorInfo{"quota", "The provider's quota is used up."}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, publicError(tc.ctx, tc.err))
			row := &rivertype.JobRow{Attempt: 3, MaxAttempts: 3}
			require.Equal(t, tc.final, finalFailure(tc.ctx, row, tc.err))
			row.Attempt = 1
			require.False(t, finalFailure(tc.ctx, row, tc.err), "an attempt before the last is never final")
		})
	}
}

func TestEnvelopeFromRow(t *testing.T) {
	t.Parallel()
	owner := uuid.New()
	now := time.Now()
	row := func(state rivertype.JobState, meta string) *rivertype.JobRow {
		return &rivertype.JobRow{ID: 9, Kind: "ingest.pdf", State: state, Attempt: 1, MaxAttempts: 3,
			EncodedArgs: []byte(`{"paper_id":"p"}`), Metadata: []byte(meta), CreatedAt: now, ScheduledAt: now}
	}
	withOutput := `{"lectern_owner":"` + owner.String() + `","output":{"result":{"chunks":4},"error":{"code":"pdf_unreadable","message":"The PDF could not be read."}}}`
	cases := []struct {
		name            string
		row             *rivertype.JobRow
		state           State
		err             *ErrorInfo
		result          string
		cancelRequested bool
	}{
		{"queued", row(rivertype.JobStateAvailable, `{"lectern_owner":null}`), StateQueued, nil, "", false},
		{"running with a cancel requested", row(rivertype.JobStateRunning, `{"cancel_attempted_at":"2026-01-01T00:00:00Z"}`), StateRunning, nil, "", true},
		{"succeeded with a result", row(rivertype.JobStateCompleted, withOutput), StateSucceeded, nil, `{"chunks":4}`, false},
		{"retrying shows the last error", row(rivertype.JobStateRetryable, withOutput), StateRetrying, &ErrorInfo{"pdf_unreadable", "The PDF could not be read."}, `{"chunks":4}`, false},
		{"failed without output is generic", row(rivertype.JobStateDiscarded, `{}`), StateFailed, &ErrorInfo{CodeJobFailed, "Job failed"}, "", false},
		{"cancelled has no error", row(rivertype.JobStateCancelled, `{"cancel_attempted_at":"2026-01-01T00:00:00Z"}`), StateCancelled, nil, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newEnvelope(tc.row, nil)
			require.Equal(t, tc.state, env.State)
			require.Equal(t, tc.err, env.Error)
			require.Equal(t, tc.cancelRequested, env.CancelRequested)
			if tc.result == "" {
				require.Nil(t, env.Result)
			} else {
				require.JSONEq(t, tc.result, string(env.Result))
			}
			require.JSONEq(t, `{"paper_id":"p"}`, string(env.Args))
		})
	}
	require.Equal(t, owner, ownerOf([]byte(withOutput)))
	require.Equal(t, uuid.Nil, ownerOf([]byte(`{"lectern_owner":null}`)))
	require.Equal(t, uuid.Nil, ownerOf([]byte(`{}`)))
}

func TestHourlyAtNext(t *testing.T) {
	t.Parallel()
	h := HourlyAt(17)
	cases := []struct{ now, want string }{
		{"2026-03-01T00:00:00Z", "2026-03-01T00:17:00Z"},
		{"2026-03-01T00:16:59Z", "2026-03-01T00:17:00Z"},
		{"2026-03-01T00:17:00Z", "2026-03-01T01:17:00Z"},
		{"2026-12-31T23:30:00Z", "2027-01-01T00:17:00Z"},
	}
	for _, tc := range cases {
		now, err := time.Parse(time.RFC3339, tc.now)
		require.NoError(t, err)
		want, err := time.Parse(time.RFC3339, tc.want)
		require.NoError(t, err)
		require.True(t, want.Equal(h.Next(now)), "%s: got %s", tc.now, h.Next(now))
	}
}

func TestSchedulePeriodicAddsToTheTableOnce(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	require.ErrorContains(t, reg.SchedulePeriodic(Periodic{Args: PurgeArgs{}}), "schedule and args are required")
	require.NoError(t, reg.SchedulePeriodic(Periodic{Schedule: HourlyAt(5), Args: PurgeArgs{}}))
	require.ErrorContains(t, reg.SchedulePeriodic(Periodic{Schedule: DailyAt(1, 0), Args: PurgeArgs{}}), "already scheduled")

	rt := &runtime{reg: reg.snapshot(), cfg: Config{}}
	require.NoError(t, registerBuiltins(rt.reg, rt))
	builtins := len(periodicJobs(&runtime{reg: NewRegistry().snapshot(), cfg: Config{}}))
	require.Len(t, periodicJobs(rt), builtins+1, "the scheduled job joins the host's table")
}
