package faults

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for raw, want := range map[string]Spec{
		"holder-pause:p=0.05,d=600ms":        {Kind: HolderPause, P: 0.05, D: 600 * time.Millisecond},
		"process-pause:p=1,d=2s":             {Kind: ProcessPause, P: 1, D: 2 * time.Second, Point: PointHold},
		"process-pause:p=1,d=2s,point=hold":  {Kind: ProcessPause, P: 1, D: 2 * time.Second, Point: PointHold},
		"process-pause:point=write,p=1,d=2s": {Kind: ProcessPause, P: 1, D: 2 * time.Second, Point: PointWrite},
		"release-pause:p=0.1,d=300ms":        {Kind: ReleasePause, P: 0.1, D: 300 * time.Millisecond},
		"redis-pause:node=2,at=1s,d=500ms":   {Kind: RedisPause, Node: 2, At: time.Second, D: 500 * time.Millisecond},
		"kill:node=1,at=2s":                  {Kind: Kill, Node: 1, At: 2 * time.Second},
		"kill:node=1,at=2s,restart=1s":       {Kind: Kill, Node: 1, At: 2 * time.Second, Restart: time.Second},
		"failover:at=3s,lag=200ms":           {Kind: Failover, At: 3 * time.Second, Lag: 200 * time.Millisecond},
		"latency:node=0,ms=2.5,jitter=1ms":   {Kind: Latency, MS: 2500 * time.Microsecond, Jitter: time.Millisecond},
		"partition:node=0,at=1s,d=2s":        {Kind: Partition, At: time.Second, D: 2 * time.Second},
		"clock-skew:fraction=0.5,offset=-3s": {Kind: ClockSkew, Fraction: 0.5, Offset: -3 * time.Second},
		"crash-between:p=0.01":               {Kind: CrashBetween, P: 0.01},
	} {
		got, err := Parse(raw)
		want.Raw = raw
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
}

func TestParseErrorsListTheForms(t *testing.T) {
	for raw, mention := range map[string]string{
		"meteor":                       `unknown fault "meteor"`,
		"holder-pause:p=0.5":           "needs d=",
		"holder-pause:p=2,d=1s":        "from 0 to 1",
		"holder-pause:p=0.5,d=1s,x=1":  `no field "x"`,
		"holder-pause:p=0.5,d=soon":    `d="soon"`,
		"kill:node=-1,at=1s":           "node must be >= 0",
		"kill:node=1,at=1s,at=2s":      "given twice",
		"latency:node=0,ms":            "not field=value",
		"partition:node=0,at=1s,d=-1s": "d must be > 0",
		"clock-skew:fraction=0.5":      "needs offset=",

		"process-pause:p=1,d=1s,point=later":            `point="later": want one of hold, write`,
		"process-pause:p=1,d=1s,point=":                 `point="": want one of hold, write`,
		"process-pause:p=1,d=1s,point=hold,point=write": "given twice",
		"holder-pause:p=1,d=1s,point=write":             `holder-pause has no field "point"`,
		"release-pause:p=1,d=1s,point=write":            `release-pause has no field "point"`,
		"release-pause:p=1":                             "release-pause needs d=",
		"release-pause:d=1s":                            "release-pause needs p=",
		"release-pause:p=1.5,d=1s":                      `p="1.5": want a number from 0 to 1`,
		"release-pause:p=1,d=-5ms":                      "d must be > 0",
		"holder-pause:p=NaN,d=1ms":                      `p="NaN": want a number from 0 to 1`,
		"holder-pause:p=Inf,d=1ms":                      `p="Inf": want a number from 0 to 1`,
		"holder-pause:p=0.1,,d=1ms":                     "an empty field",
		"holder-pause:p=0.1,d=1ms,":                     "an empty field",
		"partition:node=0,at=1s,d=0s":                   "d must be > 0",
		"redis-pause:node=0,at=1s,d=0s":                 "d must be > 0",
		"clock-skew:fraction=0.5,offset=-1000000h":      "offset must be from -24h0m0s to 24h0m0s",
		"clock-skew:fraction=NaN,offset=1s":             "want a number from 0 to 1",
		"latency:node=0,ms=1000000000":                  "ms must be from 0 to 10000",
		"latency:node=0,ms=NaN":                         "ms must be from 0 to 10000",
		"latency:node=0,ms=5,jitter=1h":                 "jitter must be from 0 to 10s",
	} {
		_, err := Parse(raw)
		var se *SpecError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): want a *SpecError, got %v", raw, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, mention) || !strings.Contains(msg, "holder-pause:p=P,d=D") || !strings.Contains(msg, "kill:node=I,at=T[,restart=D]") {
			t.Errorf("Parse(%q) error should mention %q and list the valid forms:\n%s", raw, mention, msg)
		}
	}
}

// The catalog `lockbench faults` prints shows every form, and says what point= does.
func TestHelp(t *testing.T) {
	forms := Forms()
	for _, want := range []string{"process-pause:p=P,d=D[,point=hold|write]", "release-pause:p=P,d=D"} {
		if !slices.Contains(forms, want) {
			t.Errorf("Forms() = %q, want it to contain %q", forms, want)
		}
	}
	help := Help()
	for _, want := range []string{"release-pause:p=P,d=D", "between its GET and DEL", "point=hold (the default)", "point=write between the lease check"} {
		if !strings.Contains(help, want) {
			t.Errorf("Help() does not mention %q:\n%s", want, help)
		}
	}
	// A summary's further lines line up under its first.
	for _, line := range strings.Split(strings.TrimRight(help, "\n"), "\n") {
		if !strings.HasPrefix(line, "  ") || len(line) < 48 || line[46] != ' ' || line[47] == ' ' {
			t.Errorf("misaligned help line %q", line)
		}
	}
}

// Every form reads as a user types it: with its optional fields filled in, or left out
// together with their brackets, and the placeholders replaced by values, it parses.
func TestFormsAreTypedAsShown(t *testing.T) {
	values := strings.NewReplacer("=P", "=0.5", "=I", "=0", "=T", "=1s", "=D", "=1s", "=M", "=5", "=hold|write", "=write")
	for _, form := range Forms() {
		if strings.Contains(form, ",[") || strings.Contains(form, "],") || strings.Contains(form, ",,") {
			t.Errorf("form %q: an optional field's comma belongs inside its brackets: kill:node=I,at=T[,restart=D]", form)
		}
		without, with := form, strings.NewReplacer("[", "", "]", "").Replace(form)
		for strings.Contains(without, "[") {
			open, end := strings.Index(without, "["), strings.Index(without, "]")
			without = without[:open] + without[end+1:]
		}
		for _, typed := range []string{values.Replace(with), values.Replace(without)} {
			if _, err := Parse(typed); err != nil {
				t.Errorf("form %q typed as %q: %v", form, typed, err)
			}
		}
	}
}
