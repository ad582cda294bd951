package npz

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// pyList stands for a list literal, which only structured dtypes use.
type pyList struct{}

// pyParser reads the small subset of Python literals used by .npy headers:
// a dict with string keys whose values are strings, booleans, tuples of ints
// (or lists, recognized only to reject structured dtypes).
type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyParser) expect(c byte) error {
	if p.peek() != c {
		return fmt.Errorf("expected %q at byte %d", c, p.i)
	}
	p.i++
	return nil
}

func (p *pyParser) dict() (map[string]any, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for {
		if p.peek() == '}' {
			p.i++
			return out, nil
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("key %q repeated", key)
		}
		out[key] = v
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return nil, fmt.Errorf("expected ',' or '}' at byte %d", p.i)
		}
	}
}

func (p *pyParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", fmt.Errorf("expected a string at byte %d", p.i)
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return b.String(), nil
		case c == '\\':
			if p.i >= len(p.s) {
				return "", errors.New("unterminated string")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated string")
}

func (p *pyParser) value() (any, error) {
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		return p.str()
	case c == '(':
		return p.tuple()
	case c == '[':
		return p.skipList()
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return nil, fmt.Errorf("unexpected value at byte %d", p.i)
}

// skipList skips a (nested) list literal; only structured dtypes use lists,
// and the caller rejects them.
func (p *pyParser) skipList() (pyList, error) {
	depth := 0
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '[', '(':
			depth++
			p.i++
		case ']', ')':
			depth--
			p.i++
			if depth == 0 {
				return pyList{}, nil
			}
		case '\'', '"':
			if _, err := p.str(); err != nil {
				return pyList{}, err
			}
		default:
			p.i++
		}
	}
	return pyList{}, errors.New("unterminated list")
}

func (p *pyParser) tuple() ([]int, error) {
	p.i++ // '('
	out := []int{}
	for {
		if p.peek() == ')' {
			p.i++
			return out, nil
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return nil, fmt.Errorf("expected a dimension at byte %d", p.i)
		}
		v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
		if err != nil || v > maxElements {
			return nil, fmt.Errorf("dimension %q too large", p.s[start:p.i])
		}
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long
			p.i++
		}
		out = append(out, int(v))
		if len(out) > 32 {
			return nil, errors.New("more than 32 dimensions")
		}
		switch p.peek() {
		case ',':
			p.i++
		case ')':
		default:
			return nil, fmt.Errorf("expected ',' or ')' at byte %d", p.i)
		}
	}
}
