package profile

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Attr is one span attribute for Attrs.
type Attr struct {
	Key   string
	Value any // string, bool, any integer or float type; others via encoding/json
}

// Attrs builds a span's attrs object from key/value pairs, in order. It is
// meant for the occasional annotated span (it allocates); plain Span calls
// stay allocation-free.
func Attrs(kv ...Attr) json.RawMessage {
	b := []byte{'{'}
	for i, a := range kv {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, a.Key)
		b = append(b, ':')
		switch v := a.Value.(type) {
		case string:
			b = appendString(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int32:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case uint32:
			b = strconv.AppendUint(b, uint64(v), 10)
		case uint64:
			b = strconv.AppendUint(b, v, 10)
		case float32:
			b = appendFloat(b, float64(v))
		case float64:
			b = appendFloat(b, v)
		default:
			j, err := json.Marshal(v)
			if err != nil {
				j = appendString(nil, fmt.Sprint(v))
			}
			b = append(b, j...)
		}
	}
	return append(b, '}')
}

// AttrMap decodes a span's attrs into a map (numbers as float64); nil if
// there are none.
func (e *Event) AttrMap() (map[string]any, error) {
	if len(e.Attrs) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(e.Attrs, &m); err != nil {
		return nil, fmt.Errorf("span attrs: %w", err)
	}
	return m, nil
}
