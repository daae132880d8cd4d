// Package config owns xce.toml: it loads and validates the cluster's
// configuration (queues, application profiles, projects, hosts, groups,
// shared resources) and turns a submission into an effective job.
package config
