// Package replica owns the replication of the controller's store between
// controller candidates: a hashicorp/raft node whose log carries the
// store's write batches (lib/store's Replicator) and whose state machine
// is the candidate's own Badger store; snapshots are the store's backup
// stream. It also owns the stream layer raft talks through, and the
// multiplexing of raft's connections with gRPC's on the candidate's one
// TCP port, split by the role its peer proves in the cluster handshake.
//
// Why hashicorp/raft: it is the Raft that Consul, Nomad and Vault run in
// production, it brings its own transport, snapshotting and membership
// changes, and its state-machine interface fits a store that is already
// a key-value database.
package replica
