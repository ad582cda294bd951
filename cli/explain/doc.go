// Package explain is `gnnscope explain`: a session's (or one run's)
// answers — the stage ledger, the verdict, time to accuracy and advice —
// computed by package analysis from the journals alone.
package explain
