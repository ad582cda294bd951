package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of raw values (config, attrs, summary).
const maxDepth = 512

// DecodeEvent parses one journal line (one JSON object; surrounding white
// space, including a trailing newline, is allowed) into e, which is reset
// first. Unknown keys are skipped so newer writers stay readable. Numbers in
// float fields may also be the strings "NaN", "Inf", "+Inf", "-Inf",
// "Infinity", "-Infinity" or the bare tokens NaN, Infinity and -Infinity that
// Python's json module writes; integer fields accept integral floats such as
// 3.0. null leaves a field at its zero value. The error says what was wrong
// and at which byte offset.
func DecodeEvent(line []byte, e *Event) error {
	*e = Event{}
	d := decoder{b: line}
	if err := d.event(e); err != nil {
		return err
	}
	return nil
}

// ErrSyntax is wrapped by every DecodeEvent error.
var ErrSyntax = errors.New("malformed event")

type decoder struct {
	b   []byte
	i   int
	buf []byte // scratch for strings with escapes
}

func (d *decoder) errf(format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrSyntax, d.i, fmt.Sprintf(format, args...))
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// colon consumes a ':' between white space, reporting whether it was there
// (if not, d.i is at the byte found instead).
func (d *decoder) colon() bool {
	d.ws()
	if d.peek() != ':' {
		return false
	}
	d.i++
	d.ws()
	return true
}

// next consumes the white space and the ',' or closer after a member or
// element; done reports the closer.
func (d *decoder) next(closer byte) (done bool, err error) {
	d.ws()
	if c := d.peek(); c == closer || c == ',' {
		d.i++
		return c == closer, nil
	}
	return false, d.errf("expected ',' or %q", closer)
}

func (d *decoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) event(e *Event) error {
	d.ws()
	if d.peek() != '{' {
		return d.errf("expected an object")
	}
	d.i++
	seenT := false
	first := true
	for {
		d.ws()
		if d.peek() == '}' && first {
			d.i++
			break
		}
		key, err := d.keyBytes()
		if err != nil {
			return err
		}
		if !d.colon() {
			return d.errf("expected ':' after key %q", key)
		}
		if err := d.field(e, key, &seenT); err != nil {
			return err
		}
		// The separator is read here rather than by next, which does
		// not inline: this loop is the decoder's hot path.
		d.ws()
		c := d.peek()
		d.i++
		if c == '}' {
			break
		}
		if c != ',' {
			d.i--
			return d.errf("expected ',' or '}'")
		}
		first = false
	}
	d.ws()
	if d.i != len(d.b) {
		return d.errf("unexpected data after the object")
	}
	if !seenT || e.T == "" {
		return fmt.Errorf("%w: no event type \"t\"", ErrSyntax)
	}
	return nil
}

// keyBytes returns a key; without escapes it aliases the input.
func (d *decoder) keyBytes() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.errf("expected a key")
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch d.b[j] {
		case '"':
			d.i = j + 1
			return d.b[start:j], nil
		case '\\':
			s, err := d.str()
			return []byte(s), err
		}
	}
	return nil, d.errf("unterminated key")
}

func (d *decoder) field(e *Event, key []byte, seenT *bool) error {
	var err error
	switch string(key) {
	case "t":
		e.T, err = d.str()
		*seenT = true
	case "v":
		var v int64
		v, err = d.int()
		e.V = int(v)
	case "run":
		e.Run, err = d.str()
	case "session":
		e.Session, err = d.str()
	case "variant":
		e.Variant, err = d.str()
	case "wall":
		e.Wall, err = d.str()
	case "host":
		e.Host, err = d.host()
	case "config":
		e.Config, err = d.raw()
	case "name":
		e.Name, err = d.str()
	case "lane":
		e.Lane, err = d.str()
	case "epoch":
		var v int64
		v, err = d.int()
		e.Epoch = int(v)
	case "batch":
		var v int64
		v, err = d.int()
		e.Batch = int(v)
	case "layer":
		var v int64
		v, err = d.int()
		e.Layer = int(v)
	case "start":
		e.Start, err = d.int()
	case "dur":
		e.Dur, err = d.int()
	case "ts":
		e.Ts, err = d.int()
	case "phase":
		e.Phase, err = d.str()
	case "peak":
		e.Peak, err = d.int()
	case "live":
		e.Live, err = d.int()
	case "budget":
		e.Budget, err = d.int()
	case "predicted":
		e.Predicted, err = d.int()
	case "used":
		e.Used, err = d.int()
	case "total":
		e.Total, err = d.int()
	case "util":
		e.Util, err = d.float()
	case "requested":
		e.Requested, err = d.int()
	case "action":
		e.Action, err = d.str()
	case "mean":
		e.Mean, err = d.float()
	case "max":
		e.Max, err = d.float()
	case "hist":
		e.Hist, err = d.ints()
	case "rel_err":
		e.RelErr, err = d.float()
	case "value":
		e.Value, err = d.float()
	case "status":
		e.Status, err = d.str()
	case "error":
		e.Error, err = d.str()
	case "summary":
		e.Summary, err = d.raw()
	case "attrs":
		e.Attrs, err = d.raw()
	default:
		_, err = d.skip(0)
	}
	return err
}

// null consumes a null literal if present.
func (d *decoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// str parses a JSON string (or null as ""). Well-known names are returned
// as constants without allocating.
func (d *decoder) str() (string, error) {
	if d.null() {
		return "", nil
	}
	if d.peek() != '"' {
		return "", d.errf("expected a string")
	}
	start := d.i + 1
	j := start
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			return intern(d.b[start:j]), nil
		}
		if c == '\\' {
			break
		}
	}
	if j >= len(d.b) {
		return "", d.errf("unterminated string")
	}
	// slow path: escapes
	buf := append(d.buf[:0], d.b[start:j]...)
	for j < len(d.b) {
		c := d.b[j]
		switch {
		case c == '"':
			d.i = j + 1
			d.buf = buf
			return string(buf), nil
		case c != '\\':
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(d.b) {
			break
		}
		esc := d.b[j+1]
		j += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.b, j)
			if !ok {
				d.i = j
				return "", d.errf("bad \\u escape")
			}
			j += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if j+6 <= len(d.b) && d.b[j] == '\\' && d.b[j+1] == 'u' {
					r2, ok2 = hex4(d.b, j+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					j += 6
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			d.i = j - 1
			return "", d.errf("bad escape \\%c", esc)
		}
	}
	d.i = len(d.b)
	return "", d.errf("unterminated string")
}

func hex4(b []byte, j int) (rune, bool) {
	if j+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[j : j+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// intern returns constant strings for the names every journal repeats, so
// decoding a span usually allocates nothing for its name and lane.
func intern(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case TypeSpan:
		return TypeSpan
	case TypeMem:
		return TypeMem
	case TypeMetric:
		return TypeMetric
	case TypeGPU:
		return TypeGPU
	case TypeStale:
		return TypeStale
	case TypeOOM:
		return TypeOOM
	case TypeHistErr:
		return TypeHistErr
	case TypeRunStart:
		return TypeRunStart
	case TypeRunEnd:
		return TypeRunEnd
	case StageSample:
		return StageSample
	case StageTransfer:
		return StageTransfer
	case StageTrain:
		return StageTrain
	case StageForward:
		return StageForward
	case StageBackward:
		return StageBackward
	case StageStep:
		return StageStep
	case StageEval:
		return StageEval
	case StageHistoryPull:
		return StageHistoryPull
	case StageHistoryPush:
		return StageHistoryPush
	case StageCache:
		return StageCache
	case StageGuard:
		return StageGuard
	case StageWait:
		return StageWait
	case LaneCompute:
		return LaneCompute
	case LaneCopy:
		return LaneCopy
	case "loss":
		return "loss"
	case "val_acc":
		return "val_acc"
	case "val_loss":
		return "val_loss"
	case "test_acc":
		return "test_acc"
	case "train_acc":
		return "train_acc"
	case "lr":
		return "lr"
	}
	if len(b) > 8 && string(b[:8]) == "sampler/" {
		n := 0
		for _, c := range b[8:] {
			if c < '0' || c > '9' || n > len(samplerLanes) {
				return string(b)
			}
			n = n*10 + int(c-'0')
		}
		if n < len(samplerLanes) && (b[8] != '0' || len(b) == 9) {
			return samplerLanes[n]
		}
	}
	return string(b)
}

// number returns the extent of a JSON number token.
func (d *decoder) number() ([]byte, error) {
	start := d.i
	j := d.i
	if j < len(d.b) && (d.b[j] == '-' || d.b[j] == '+') {
		j++
	}
	digits := 0
	for j < len(d.b) {
		c := d.b[j]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+' {
			if c >= '0' && c <= '9' {
				digits++
			}
			j++
			continue
		}
		break
	}
	if digits == 0 {
		return nil, d.errf("expected a number")
	}
	d.i = j
	return d.b[start:j], nil
}

// int parses an integer field. Integral floats (3.0, 1e9) are accepted.
func (d *decoder) int() (int64, error) {
	if d.null() {
		return 0, nil
	}
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	neg := false
	s := tok
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	var v uint64
	simple := len(s) > 0 && len(s) <= 18
	if simple {
		for _, c := range s {
			if c < '0' || c > '9' {
				simple = false
				break
			}
			v = v*10 + uint64(c-'0')
		}
	}
	if simple {
		if neg {
			return -int64(v), nil
		}
		return int64(v), nil
	}
	if iv, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
		return iv, nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 9.2e18 {
		d.i -= len(tok)
		return 0, d.errf("not an integer: %q", tok)
	}
	return int64(f), nil
}

// float parses a float field, including the non-finite spellings.
func (d *decoder) float() (float64, error) {
	if d.null() {
		return 0, nil
	}
	switch c := d.peek(); {
	case c == '"':
		s, err := d.str()
		if err != nil {
			return 0, err
		}
		switch s {
		case "NaN", "nan":
			return math.NaN(), nil
		case "Inf", "+Inf", "Infinity", "+Infinity", "inf":
			return math.Inf(1), nil
		case "-Inf", "-Infinity", "-inf":
			return math.Inf(-1), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
		return 0, d.errf("not a number: %q", s)
	case c == 'N' || c == 'I' || (c == '-' && d.i+1 < len(d.b) && d.b[d.i+1] == 'I'):
		for _, lit := range [...]struct {
			s string
			v float64
		}{{"NaN", math.NaN()}, {"Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}} {
			if len(d.b)-d.i >= len(lit.s) && string(d.b[d.i:d.i+len(lit.s)]) == lit.s {
				d.i += len(lit.s)
				return lit.v, nil
			}
		}
		return 0, d.errf("expected a number")
	}
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	if v, ok := smallInt(tok); ok {
		return float64(v), nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, nil // ±Inf or 0 on over/underflow
		}
		d.i -= len(tok)
		return 0, d.errf("not a number: %q", tok)
	}
	return f, nil
}

// smallInt parses a short plain integer token exactly representable as a float.
func smallInt(tok []byte) (int64, bool) {
	s := tok
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		if v == 0 {
			return 0, false // -0 keeps its sign through ParseFloat
		}
		v = -v
	}
	return v, true
}

func (d *decoder) ints() ([]int64, error) {
	if d.null() {
		return nil, nil
	}
	if d.peek() != '[' {
		return nil, d.errf("expected an array")
	}
	d.i++
	out := []int64{}
	d.ws()
	if d.peek() == ']' {
		d.i++
		return out, nil
	}
	for {
		d.ws()
		v, err := d.int()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if done, err := d.next(']'); done || err != nil {
			if err != nil {
				return nil, err
			}
			return out, nil
		}
	}
}

func (d *decoder) host() (*Host, error) {
	if d.null() {
		return nil, nil
	}
	if d.peek() != '{' {
		return nil, d.errf("expected an object for host")
	}
	d.i++
	h := &Host{}
	d.ws()
	if d.peek() == '}' {
		d.i++
		return h, nil
	}
	for {
		d.ws()
		key, err := d.keyBytes()
		if err != nil {
			return nil, err
		}
		if !d.colon() {
			return nil, d.errf("expected ':'")
		}
		switch string(key) {
		case "cpu":
			h.CPU, err = d.str()
		case "cores":
			var v int64
			v, err = d.int()
			h.Cores = int(v)
		case "gpu":
			h.GPU, err = d.str()
		case "driver":
			h.Driver, err = d.str()
		case "gpu_mem":
			h.GPUMem, err = d.int()
		case "go":
			h.Go, err = d.str()
		case "os":
			h.OS, err = d.str()
		case "hostname":
			h.Hostname, err = d.str()
		default:
			_, err = d.skip(0)
		}
		if err != nil {
			return nil, err
		}
		if done, err := d.next('}'); done || err != nil {
			if err != nil {
				return nil, err
			}
			return h, nil
		}
	}
}

// raw returns a copy of one JSON value (null gives nil).
func (d *decoder) raw() ([]byte, error) {
	if d.null() {
		return nil, nil
	}
	v, err := d.skip(0)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), v...), nil
}

// skip consumes one JSON value and returns its bytes.
func (d *decoder) skip(depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, d.errf("nesting too deep")
	}
	start := d.i
	switch c := d.peek(); {
	case c == '"':
		j := d.i + 1
		for ; j < len(d.b); j++ {
			if d.b[j] == '\\' {
				j++
				continue
			}
			if d.b[j] == '"' {
				break
			}
		}
		if j >= len(d.b) {
			return nil, d.errf("unterminated string")
		}
		d.i = j + 1
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		d.i++
		d.ws()
		if d.peek() == closer {
			d.i++
			break
		}
		for {
			d.ws()
			if c == '{' {
				if _, err := d.keyBytes(); err != nil {
					return nil, err
				}
				if !d.colon() {
					return nil, d.errf("expected ':'")
				}
			}
			if _, err := d.skip(depth + 1); err != nil {
				return nil, err
			}
			done, err := d.next(closer)
			if err != nil {
				return nil, err
			}
			if done {
				break
			}
		}
	case c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'I':
		for _, lit := range [...]string{"true", "false", "null", "NaN", "Infinity"} {
			if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
				d.i += len(lit)
				return d.b[start:d.i], nil
			}
		}
		return nil, d.errf("unexpected literal")
	case c == '-' && d.i+1 < len(d.b) && d.b[d.i+1] == 'I':
		if len(d.b)-d.i >= 9 && string(d.b[d.i:d.i+9]) == "-Infinity" {
			d.i += 9
			break
		}
		return nil, d.errf("unexpected literal")
	default:
		if _, err := d.number(); err != nil {
			return nil, err
		}
	}
	return d.b[start:d.i], nil
}
