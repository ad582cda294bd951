package profile

import (
	"errors"
	"fmt"
)

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
	case "name":
		e.Name, err = d.str()
	case "lane":
		e.Lane, err = d.str()
	case "epoch":
		e.Epoch, err = d.smallInt()
	case "batch":
		e.Batch, err = d.smallInt()
	case "layer":
		e.Layer, err = d.smallInt()
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
	case "actual":
		e.Actual, err = d.int()
	case "hits":
		e.Hits, err = d.int()
	case "misses":
		e.Misses, err = d.int()
	case "bytes_h2d":
		e.BytesH2D, err = d.int()
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
		var s string
		s, err = d.str()
		e.Status = Status(s)
	case "error":
		e.Error, err = d.str()
	case "summary":
		e.Summary, err = d.raw()
	case "usage":
		e.Usage, err = d.usage()
	case "attrs":
		e.Attrs, err = d.raw()
	default:
		var ok bool
		if ok, err = d.startField(e, key); !ok {
			_, err = d.skip(0)
		}
	}
	return err
}

// startField decodes a field of run_start's (see field); false for a key
// that is none.
func (d *decoder) startField(e *Event, key []byte) (bool, error) {
	var err error
	switch string(key) {
	case "v":
		e.V, err = d.smallInt()
	case "run":
		e.Run, err = d.str()
	case "session":
		e.Session, err = d.str()
	case "variant":
		e.Variant, err = d.str()
	case "wall":
		e.Wall, err = d.str()
	case "rank":
		e.Rank, err = d.smallInt()
	case "world":
		e.World, err = d.smallInt()
	case "node":
		e.Node, err = d.str()
	case "node_rank":
		e.NodeRank, err = d.smallInt()
	case "host":
		e.Host, err = d.host()
	case "config":
		e.Config, err = d.raw()
	case "adjusted":
		e.Adjusted, err = d.strs()
	case "wall_local":
		e.WallLocal, err = d.str()
	case "clock":
		e.Clock, err = d.clock()
	default:
		return false, nil
	}
	return true, err
}

// smallInt reads an integer held in an int (an epoch, a batch, a rank).
func (d *decoder) smallInt() (int, error) {
	v, err := d.int()
	return int(v), err
}

// null consumes a null literal if present.
func (d *decoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
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
		case "gemm":
			h.Gemm, err = d.str()
		case "go":
			h.Go, err = d.str()
		case "os":
			h.OS, err = d.str()
		case "hostname":
			h.Hostname, err = d.str()
		case "cpus":
			var v int64
			v, err = d.int()
			h.CPUs = int(v)
		case "load":
			h.Load, err = d.float()
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
