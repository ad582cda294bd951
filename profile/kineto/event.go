package kineto

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rawEvent is a trace event as decoded, its flexible fields kept raw
// (filled by UnmarshalJSON in scanjson.go; the tags name the keys).
type rawEvent struct {
	Ph   json.RawMessage `json:"ph"`
	Cat  json.RawMessage `json:"cat"`
	Name json.RawMessage `json:"name"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Ts   json.RawMessage `json:"ts"`
	Dur  json.RawMessage `json:"dur"`
	ID   json.RawMessage `json:"id"`
	BP   json.RawMessage `json:"bp"`
	Args *rawArgs        `json:"args"`
}

type rawArgs struct {
	External    json.RawMessage `json:"External id"`
	Correlation json.RawMessage `json:"correlation"`
	Device      json.RawMessage `json:"device"`
	Stream      json.RawMessage `json:"stream"`
	DevType     json.RawMessage `json:"Device Type"`
	DevID       json.RawMessage `json:"Device Id"`
	Allocated   json.RawMessage `json:"Total Allocated"`
	Reserved    json.RawMessage `json:"Total Reserved"`
}

// event decodes the next element of traceEvents into ev.
func (r *Reader) event(ev *Raw) error {
	var re rawEvent
	if err := r.dec.Decode(&re); err != nil {
		// a value of the wrong type (args an array, an event a number)
		// was read whole and left out: the event keeps what fits
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return r.errorf("%w", eofIsUnexpected(err))
		}
	}
	*ev = Raw{Ph: rawText(re.Ph), Cat: rawText(re.Cat), Name: rawText(re.Name),
		Pid: rawText(re.Pid), Tid: rawText(re.Tid), ID: rawText(re.ID), BP: rawText(re.BP)}
	if len(re.Ts) > 0 && !isNull(re.Ts) {
		ts, ok := parseMicros(re.Ts)
		if !ok {
			return r.errorf("ts %s is not a time in microseconds that fits", clip(re.Ts))
		}
		ev.Ts = ts
	}
	if len(re.Dur) > 0 && !isNull(re.Dur) {
		d, ok := parseMicros(re.Dur)
		if !ok || d < 0 {
			return r.errorf("dur %s is not a duration in microseconds that fits", clip(re.Dur))
		}
		ev.Dur, ev.HasDur = d, true
	}
	if a := re.Args; a != nil {
		g := &ev.Args
		g.External, g.HasExternal = rawInt(a.External)
		g.Correlation, g.HasCorrelation = rawInt(a.Correlation)
		g.Device, g.HasDevice = rawInt(a.Device)
		g.Stream, g.HasStream = rawInt(a.Stream)
		g.DevType, _ = rawInt(a.DevType)
		g.DevID, _ = rawInt(a.DevID)
		var ok1, ok2 bool
		g.Allocated, ok1 = rawInt(a.Allocated)
		g.Reserved, ok2 = rawInt(a.Reserved)
		g.HasMem = ok1 || ok2
	}
	return nil
}

// rawText returns a string value's text, a number's digits, "" otherwise.
func rawText(b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	if b[0] == '"' {
		if n := len(b); n >= 2 && b[n-1] == '"' && bytes.IndexByte(b[1:n-1], '\\') < 0 && bytes.IndexByte(b[1:n-1], '"') < 0 && utf8.Valid(b[1:n-1]) {
			return string(b[1 : n-1]) // no escapes: the text as it is
		}
		var s string
		if json.Unmarshal(b, &s) != nil {
			return ""
		}
		return s
	}
	if b[0] == '-' || (b[0] >= '0' && b[0] <= '9') {
		return string(b)
	}
	return ""
}

func isNull(b json.RawMessage) bool { return bytes.Equal(b, []byte("null")) }

// clip shortens raw text for an error message.
func clip(b json.RawMessage) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// rawInt parses an integer written as a number or a string of digits; a
// number with a fraction is cut to its integer part.
func rawInt(b json.RawMessage) (int64, bool) {
	s := rawText(b)
	if s == "" {
		return 0, false
	}
	return parseInt(s)
}

// parseInt parses s as an integer, accepting "12.0" and "1.2e3" when they
// are whole and in range.
func parseInt(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return 0, false
	}
	return int64(f), true
}

// maxMicros bounds a time in microseconds so that its nanoseconds, and
// sums of two of them, fit an int64.
const maxMicros = math.MaxInt64 / 1000 / 4

// fracScale weighs the first three decimals of a microsecond.
var fracScale = [3]int64{100, 10, 1}

// parseMicros parses a time in microseconds (integer, decimal with up to
// nanosecond digits, exponent form, or any of these quoted) into exact
// nanoseconds where the text allows it.
func parseMicros(b json.RawMessage) (int64, bool) {
	s := strings.TrimSpace(rawText(b))
	if s == "" {
		return 0, false
	}
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.Abs(f) > maxMicros {
			return 0, false
		}
		return int64(math.Round(f * 1000)), true
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > maxMicros {
		return 0, false
	}
	ns := w * 1000
	for i := 0; i < 3; i++ {
		d := int64(0)
		if i < len(frac) {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			d = int64(c - '0')
		}
		ns += d * fracScale[i]
	}
	for i := 3; i < len(frac); i++ { // digits beyond the ns are dropped
		if frac[i] < '0' || frac[i] > '9' {
			return 0, false
		}
	}
	if neg {
		ns = -ns
	}
	return ns, true
}
