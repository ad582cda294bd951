//go:build !unix

package sessions

import "os"

// locksImports says that lockDir takes no locks on this platform: import
// folders are judged by their pid and age alone.
const locksImports = false

// lockDir opens the folder dir; it takes no lock on this platform.
func lockDir(dir string) (f *os.File, held bool, err error) {
	f, err = os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}
