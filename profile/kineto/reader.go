package kineto

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxDepth is how deeply the values of a trace may nest; deeper is an
// error, never a deep recursion.
const MaxDepth = 64

// Raw is one trace event as read, its numbers parsed: times in ns.
type Raw struct {
	Ph, Cat, Name string
	Pid, Tid      string // as written (numbers or strings), quotes removed
	Ts, Dur       int64  // ns; Ts as written (relative to Meta.Base when set)
	HasDur        bool
	ID            string // a flow's id
	BP            string // a flow end's binding point
	Args          Args
}

// Args are the event arguments the conversion uses; Has* tell which were
// present and numeric.
type Args struct {
	External, Correlation         int64
	HasExternal, HasCorrelation   bool
	Device, Stream                int64
	HasDevice, HasStream          bool
	DevType, DevID                int64
	Allocated, Reserved           int64
	HasMem                        bool
	ExternalText, CorrelationText string // the raw text, for error messages
}

// Device is one entry of deviceProperties.
type Device struct {
	ID     int64
	Name   string
	Memory int64 // totalGlobalMem, bytes
}

// Meta is what a trace says about itself outside its events.
type Meta struct {
	Base        int64 // baseTimeNanoseconds (0: absent)
	HasBase     bool
	Rank, World int // distributedInfo (World 0: absent)
	HasRank     bool
	Devices     []Device
}

// Reader reads one trace's events in order. Meta fills in as the keys
// that carry it are met (baseTimeNanoseconds may come after the events:
// see Scan).
type Reader struct {
	Meta  Meta
	name  string
	dec   *json.Decoder
	close func() error
	state int // 0: before the first token, 1: in the object, 2: in traceEvents, 3: done
	array bool
	index int
}

// Open opens a trace file, plain or gzip-compressed (sniffed).
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	closer := f.Close
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("trace %s: gzip: %w", path, err)
		}
		r = zr
	}
	rd := NewReader(path, r)
	rd.close = closer
	return rd, nil
}

// NewReader reads a trace from r; name names it in errors.
func NewReader(name string, r io.Reader) *Reader {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return &Reader{name: name, dec: dec}
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.close == nil {
		return nil
	}
	err := r.close()
	r.close = nil
	return err
}

// Index returns how many events Next has returned.
func (r *Reader) Index() int { return r.index }

// errorf wraps err with the file, the byte offset and the event index.
func (r *Reader) errorf(format string, a ...any) error {
	return fmt.Errorf("trace %s: byte %d, event %d: %w", r.name, r.dec.InputOffset(), r.index, fmt.Errorf(format, a...))
}

// Next reads the next event into ev; false after the last (the rest of
// the trace read, Meta complete).
func (r *Reader) Next(ev *Raw) (bool, error) {
	for {
		switch r.state {
		case 0:
			tok, err := r.dec.Token()
			if err != nil {
				return false, r.errorf("not a trace: %w", eofIsUnexpected(err))
			}
			switch tok {
			case json.Delim('{'):
				r.state = 1
			case json.Delim('['):
				r.state, r.array = 2, true
			default:
				return false, r.errorf("not a trace: starts with %v, not an object", tok)
			}
		case 1:
			done, err := r.key()
			if err != nil {
				return false, err
			}
			if done {
				r.state = 3
			}
		case 2:
			if !r.dec.More() {
				if _, err := r.dec.Token(); err != nil { // ']'
					return false, r.errorf("traceEvents: %w", eofIsUnexpected(err))
				}
				r.state = 1
				if r.array {
					r.state = 3
				}
				continue
			}
			if err := r.event(ev); err != nil {
				return false, err
			}
			r.index++
			return true, nil
		default:
			return false, nil
		}
	}
}

// key reads one key of the top-level object and its value (but for
// traceEvents, whose elements Next reads); done after the closing brace.
func (r *Reader) key() (done bool, err error) {
	tok, err := r.dec.Token()
	if err != nil {
		return false, r.errorf("%w", eofIsUnexpected(err))
	}
	if tok == json.Delim('}') {
		return true, nil
	}
	k, _ := tok.(string)
	switch k {
	case "traceEvents":
		tok, err := r.dec.Token()
		if err != nil {
			return false, r.errorf("traceEvents: %w", eofIsUnexpected(err))
		}
		if tok != json.Delim('[') {
			return false, r.errorf("traceEvents is %v, not an array", tok)
		}
		r.state = 2
		return false, nil
	case "baseTimeNanoseconds":
		var n json.Number
		if err := r.dec.Decode(&n); err != nil {
			return false, r.errorf("baseTimeNanoseconds: %w", eofIsUnexpected(err))
		}
		v, ok := parseInt(string(n))
		if !ok || v > maxMicros*1000 || v < -maxMicros*1000 {
			return false, r.errorf("baseTimeNanoseconds %q is not an integer that fits", string(n))
		}
		r.Meta.Base, r.Meta.HasBase = v, true
		return false, nil
	case "distributedInfo":
		return false, r.distributed()
	case "deviceProperties":
		return false, r.devices()
	}
	if err := skipValue(r.dec, 0); err != nil {
		return false, r.errorf("key %q: %w", k, eofIsUnexpected(err))
	}
	return false, nil
}

func (r *Reader) distributed() error {
	var d struct {
		Rank      json.RawMessage `json:"rank"`
		WorldSize json.RawMessage `json:"world_size"`
	}
	if err := r.dec.Decode(&d); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return r.errorf("distributedInfo: %w", eofIsUnexpected(err))
		}
	}
	rank, ok1 := rawInt(d.Rank)
	world, ok2 := rawInt(d.WorldSize)
	if ok1 && ok2 && rank >= 0 && world > rank && world <= 1<<20 {
		r.Meta.Rank, r.Meta.World, r.Meta.HasRank = int(rank), int(world), true
	}
	return nil
}

func (r *Reader) devices() error {
	var ds []struct {
		ID     json.RawMessage `json:"id"`
		Name   string          `json:"name"`
		Memory json.RawMessage `json:"totalGlobalMem"`
	}
	if err := r.dec.Decode(&ds); err != nil {
		// deviceProperties is informative: one of another shape is left
		// out, broken JSON is an error
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return r.errorf("deviceProperties: %w", eofIsUnexpected(err))
		}
	}
	for _, d := range ds {
		id, ok := rawInt(d.ID)
		if !ok {
			continue
		}
		mem, _ := rawInt(d.Memory)
		r.Meta.Devices = append(r.Meta.Devices, Device{ID: id, Name: d.Name, Memory: max(mem, 0)})
		if len(r.Meta.Devices) >= 1024 {
			break
		}
	}
	return nil
}

// skipValue reads and drops one value, holding no more than a token.
func skipValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	if depth >= MaxDepth {
		return errors.New("values nested too deeply")
	}
	for dec.More() {
		if d == '{' {
			if _, err := dec.Token(); err != nil { // the key
				return err
			}
		}
		if err := skipValue(dec, depth+1); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// eofIsUnexpected turns a clean EOF in the middle of a trace into
// io.ErrUnexpectedEOF: the file was cut short.
func eofIsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("truncated: %w", io.ErrUnexpectedEOF)
	}
	return err
}
