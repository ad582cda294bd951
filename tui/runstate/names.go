package runstate

// Names interns short strings (stage and lane names) as small ids, so a
// span stores two uint16 instead of two strings. Id 0 is the first name
// interned. Past MaxNames distinct names every new name maps to the id of
// Other.
type Names struct {
	names []string
	ids   map[string]uint16
}

// MaxNames bounds the distinct names a Names interns.
const MaxNames = 1024

// Other is the name that stands for every name past MaxNames.
const Other = "(other)"

// ID returns the id of name, interning it on first use.
func (n *Names) ID(name string) uint16 {
	if id, ok := n.ids[name]; ok {
		return id
	}
	if n.ids == nil {
		n.ids = make(map[string]uint16)
	}
	if len(n.names) >= MaxNames-1 {
		if id, ok := n.ids[Other]; ok {
			return id
		}
		name = Other
	}
	id := uint16(len(n.names))
	n.names = append(n.names, name)
	n.ids[name] = id
	return id
}

// Lookup returns the id of name and whether it was interned.
func (n *Names) Lookup(name string) (uint16, bool) {
	id, ok := n.ids[name]
	return id, ok
}

// Name returns the name of id ("" for an unknown id).
func (n *Names) Name(id uint16) string {
	if int(id) < len(n.names) {
		return n.names[id]
	}
	return ""
}

// Len returns the number of names interned.
func (n *Names) Len() int { return len(n.names) }

// All returns the names in id order (do not modify).
func (n *Names) All() []string { return n.names }
