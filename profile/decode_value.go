package profile

import "encoding/json"

// maxDepth bounds the nesting of raw values (config, attrs, summary).
const maxDepth = 512

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

// usage reads run_end's usage object (null gives nil). It is written
// once a journal, so it goes through encoding/json; a field that does not
// fit (a non-finite float written as a string) is an error.
func (d *decoder) usage() (*Usage, error) {
	b, err := d.raw()
	if err != nil || b == nil {
		return nil, err
	}
	u := &Usage{}
	if err := json.Unmarshal(b, u); err != nil {
		return nil, d.errf("usage: %v", err)
	}
	return u, nil
}

// clock decodes a clock estimate (null: nil); unknown keys are skipped.
func (d *decoder) clock() (*Clock, error) {
	if d.null() {
		return nil, nil
	}
	if d.peek() != '{' {
		return nil, d.errf("expected an object for clock")
	}
	d.i++
	c := &Clock{}
	d.ws()
	if d.peek() == '}' {
		d.i++
		return c, nil
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
		case "offset":
			c.Offset, err = d.int()
		case "delay":
			c.Delay, err = d.int()
		case "samples":
			c.Samples, err = d.smallInt()
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
			return c, nil
		}
	}
}
