// Package enum holds what the engine's typed string enumerations (the
// config's choices: activations, cut rules, cache policies, ...) share:
// joining their values for messages. Each type and its list live in the
// package that owns them.
package enum
