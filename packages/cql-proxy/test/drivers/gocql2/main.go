// A check program for the Apache gocql v2 driver through the proxies: it connects with
// TokenAwareHostPolicy over DCAwareRoundRobinPolicy, then reads commands on stdin, one JSON line
// out per command, so a test can stop and start proxies between commands.
//
//	report [KS]     the ring as gocql sees it, the EVENT frames it has read and the protocol versions of
//	                all it has read, the keyspaces (and KS's tables) from metadata read through the proxies
//	work KS N       N token-aware prepared writes and reads; who coordinated them, and system.local
//	                read on each host by its host id (each proxy must answer about itself)
//	quit
//
// Usage: gocql2-check HOST PORT DATACENTER PROTOCOL(0 = negotiate) COMPRESSOR(none|lz4|snappy)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/apache/cassandra-gocql-driver/v2/lz4"
	"github.com/apache/cassandra-gocql-driver/v2/snappy"
)

type node struct {
	Address string `json:"address"`
	HostID  string `json:"hostId"`
	DC      string `json:"dc"`
	Rack    string `json:"rack"`
	Tokens  int    `json:"tokens"`
	Up      bool   `json:"up"`
	Version string `json:"version"`
}

type report struct {
	Nodes     []node         `json:"nodes"`
	Events    map[string]int `json:"events"`
	Versions  map[string]int `json:"versions"`
	Keyspaces []string       `json:"keyspaces,omitempty"`
	Tables    []string       `json:"tables,omitempty"`
	Error     string         `json:"error,omitempty"`
}

type work struct {
	OK           int               `json:"ok"`
	Coordinators map[string]int    `json:"coordinators"`
	LocalHostIDs map[string]string `json:"localHostIds"`
	Errors       []string          `json:"errors"`
}

// eventCounter counts the EVENT frames gocql reads (opcode 0x0C), per connection address, and
// the protocol versions of every frame it reads.
type eventCounter struct {
	mu       sync.Mutex
	counts   map[string]int
	versions map[string]int
}

func (e *eventCounter) ObserveFrameHeader(_ context.Context, h gocql.ObservedFrameHeader) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.versions[fmt.Sprintf("v%d", byte(h.Version)&0x7f)]++
	if h.Opcode.String() == "EVENT" {
		e.counts[h.Host.ConnectAddressAndPort()]++
	}
}

func copyCounts(m map[string]int) map[string]int {
	copied := make(map[string]int, len(m))
	for k, v := range m {
		copied[k] = v
	}
	return copied
}

func (e *eventCounter) snapshot() (events, versions map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return copyCounts(e.counts), copyCounts(e.versions)
}

func ringReport(session *gocql.Session, events *eventCounter, keyspace string) report {
	r := report{}
	r.Events, r.Versions = events.snapshot()
	for _, h := range session.GetHosts() {
		r.Nodes = append(r.Nodes, node{
			Address: h.ConnectAddressAndPort(),
			HostID:  h.HostID(),
			DC:      h.DataCenter(),
			Rack:    h.Rack(),
			Tokens:  len(h.Tokens()),
			Up:      h.IsUp(),
			Version: h.Version().String(),
		})
	}
	sort.Slice(r.Nodes, func(i, j int) bool { return r.Nodes[i].Address < r.Nodes[j].Address })
	iter := session.Query("SELECT keyspace_name FROM system_schema.keyspaces").Iter()
	var name string
	for iter.Scan(&name) {
		r.Keyspaces = append(r.Keyspaces, name)
	}
	if err := iter.Close(); err != nil {
		r.Error = "keyspaces: " + err.Error()
	}
	sort.Strings(r.Keyspaces)
	if keyspace != "" {
		meta, err := session.KeyspaceMetadata(keyspace)
		if err != nil {
			r.Error = "keyspace metadata: " + err.Error()
		} else {
			for table := range meta.Tables {
				r.Tables = append(r.Tables, table)
			}
			sort.Strings(r.Tables)
		}
	}
	return r
}

func doWork(session *gocql.Session, keyspace string, n int) work {
	w := work{Coordinators: map[string]int{}, LocalHostIDs: map[string]string{}, Errors: []string{}}
	fail := func(what string, err error) { w.Errors = append(w.Errors, what+": "+err.Error()) }
	for _, ddl := range []string{
		"CREATE KEYSPACE IF NOT EXISTS " + keyspace + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS " + keyspace + ".kv (k int PRIMARY KEY, v text)",
	} {
		if err := session.Query(ddl).Exec(); err != nil {
			fail("ddl", err)
			return w
		}
	}
	for i := 0; i < n; i++ {
		value := fmt.Sprintf("v%d", i)
		if err := session.Query("INSERT INTO "+keyspace+".kv (k, v) VALUES (?, ?)", i, value).Exec(); err != nil {
			fail("insert", err)
			continue
		}
		var got string
		iter := session.Query("SELECT v FROM "+keyspace+".kv WHERE k = ?", i).Iter()
		iter.Scan(&got)
		host := iter.Host()
		if err := iter.Close(); err != nil {
			fail("select", err)
			continue
		}
		if got != value {
			fail("select", fmt.Errorf("k=%d read %q, wrote %q", i, got, value))
			continue
		}
		if host != nil {
			w.Coordinators[host.ConnectAddressAndPort()]++
		}
		w.OK++
	}
	for _, h := range session.GetHosts() {
		if !h.IsUp() {
			continue
		}
		var hostID gocql.UUID
		if err := session.Query("SELECT host_id FROM system.local").SetHostID(h.HostID()).Scan(&hostID); err != nil {
			fail("system.local on "+h.ConnectAddressAndPort(), err)
			continue
		}
		w.LocalHostIDs[h.ConnectAddressAndPort()] = hostID.String()
	}
	return w
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: gocql2-check HOST PORT DATACENTER PROTOCOL COMPRESSOR")
		os.Exit(2)
	}
	port, _ := strconv.Atoi(os.Args[2])
	proto, _ := strconv.Atoi(os.Args[4])
	cluster := gocql.NewCluster(os.Args[1])
	cluster.Port = port
	cluster.ProtoVersion = proto
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy(os.Args[3]))
	switch os.Args[5] {
	case "lz4":
		cluster.Compressor = lz4.LZ4Compressor{}
	case "snappy":
		cluster.Compressor = snappy.SnappyCompressor{}
	}
	events := &eventCounter{counts: map[string]int{}, versions: map[string]int{}}
	cluster.FrameHeaderObserver = events
	session, err := cluster.CreateSession()
	out := json.NewEncoder(os.Stdout)
	if err != nil {
		_ = out.Encode(map[string]any{"connected": false, "error": err.Error()})
		os.Exit(1)
	}
	defer session.Close()
	_ = out.Encode(map[string]any{"connected": true})

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "report":
			ks := ""
			if len(fields) > 1 {
				ks = fields[1]
			}
			_ = out.Encode(ringReport(session, events, ks))
		case "work":
			n, _ := strconv.Atoi(fields[2])
			_ = out.Encode(doWork(session, fields[1], n))
		case "quit":
			return
		default:
			_ = out.Encode(map[string]any{"error": "unknown command " + fields[0]})
		}
	}
}
