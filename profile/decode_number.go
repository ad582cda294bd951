package profile

import (
	"errors"
	"math"
	"strconv"
)

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

// ints decodes an array of integers (null: nil).
func (d *decoder) ints() ([]int64, error) { return array(d, d.int) }

// array decodes a JSON array whose elements elem reads (null: nil).
func array[T any](d *decoder, elem func() (T, error)) ([]T, error) {
	if d.null() {
		return nil, nil
	}
	if d.peek() != '[' {
		return nil, d.errf("expected an array")
	}
	d.i++
	out := []T{}
	d.ws()
	if d.peek() == ']' {
		d.i++
		return out, nil
	}
	for {
		d.ws()
		v, err := elem()
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
