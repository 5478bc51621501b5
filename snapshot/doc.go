// Package snapshot models a cluster's nodes for scheduling.
package snapshot
