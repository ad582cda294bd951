//go:build !linux

package sessions

// renameNoReplace renames the folder from to to, refusing (an error
// wrapping os.ErrExist) when to exists.
func renameNoReplace(from, to string) error { return renameIfAbsent(from, to) }
