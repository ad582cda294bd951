package cmdutil

import (
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

// Factory gives every command what it needs from the outside world, so
// that tests can replace it.
type Factory struct {
	// IOStreams are the standard streams.
	IOStreams *iostreams.IOStreams
	// OpenStore opens the session store at root; "" means the default
	// ($GNNSCOPE_HOME, else the XDG data folder).
	OpenStore func(root string) (*sessions.Store, error)
}

// New returns the factory of the gnnscope binary: the process's streams
// and the store on disk.
func New() *Factory {
	f := &Factory{IOStreams: iostreams.System()}
	f.OpenStore = func(root string) (*sessions.Store, error) {
		st, err := sessions.Open(root)
		if err == nil {
			st.SetWarn(f.IOStreams.ErrOut) // session folders open to others
		}
		return st, err
	}
	return f
}
