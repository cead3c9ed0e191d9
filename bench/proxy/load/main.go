// cql-load is bench/proxy's load generator: one gocql session against one target (Cassandra
// direct, or a proxy), prepared single-partition reads or writes, either N requests always in
// flight (saturation) or R requests per second (fixed rate). Go, so that the generator costs little
// CPU beside the proxy it shares a core with.
//
// Fixed-rate latency is measured from each request's intended send time (start + i/R), not from
// when it was actually sent: a generator that waits for a slow answer before sending the next
// request would otherwise hide the wait (coordinated omission).
//
// Protocol with run.mjs, one JSON object per stdout line: {"phase":"measure"} when the measured
// window starts (after connect and warm-up), then {"phase":"done", ...figures} when it ends.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/bits"
	"math/rand"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocql/gocql"
)

type options struct {
	hosts       string
	keyspace    string
	setup       bool
	replication int
	keys        int
	op          string
	mode        string
	concurrency int
	rate        float64
	warmup      time.Duration
	duration    time.Duration
	tokenAware  bool
	conns       int
	seed        int64
	echo        string
}

type result struct {
	Phase      string   `json:"phase"`
	Completed  int      `json:"completed"`
	Errors     int      `json:"errors"`
	ErrorTexts []string `json:"errorSamples"`
	Seconds    float64  `json:"seconds"`
	OpsPerSec  float64  `json:"opsPerSec"`
	P50        float64  `json:"p50Ms"`
	P99        float64  `json:"p99Ms"`
	P999       float64  `json:"p999Ms"`
	Max        float64  `json:"maxMs"`
	CPUSeconds float64  `json:"cpuSeconds"`
	Late       int      `json:"late"`
	MaxLate    float64  `json:"maxLateMs"`
	// Histogram is [[µs, count], ...], each latency floored to 8 significant bits (≤ 0.8 % low), so
	// run.mjs can pool the rounds of a target and read percentiles of the whole.
	Histogram [][2]int64 `json:"histogram"`
}

func parse() options {
	var o options
	flag.StringVar(&o.hosts, "hosts", "127.0.0.1:9042", "contact points host:port, comma-separated")
	flag.StringVar(&o.keyspace, "keyspace", "muster_bench", "keyspace of the kv table")
	flag.BoolVar(&o.setup, "setup", false, "create the keyspace and table, write every key, exit")
	flag.IntVar(&o.replication, "replication", 1, "replication factor of the keyspace (--setup)")
	flag.IntVar(&o.keys, "keys", 10000, "partitions read and written (keys 0..keys-1)")
	flag.StringVar(&o.op, "op", "read", "read | write")
	flag.StringVar(&o.mode, "mode", "saturation", "saturation | rate | hop (round trips to an -echo process, at -rate)")
	flag.StringVar(&o.echo, "echo", "", "serve as the echo process of -mode hop on this host:port")
	flag.IntVar(&o.concurrency, "concurrency", 32, "requests in flight (saturation)")
	flag.Float64Var(&o.rate, "rate", 2000, "requests per second (rate)")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "load before the measured window")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "measured window")
	flag.BoolVar(&o.tokenAware, "token-aware", true, "route each request to a replica of its partition")
	flag.IntVar(&o.conns, "conns", 2, "connections per host")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the key sequence")
	flag.Parse()
	if o.op != "read" && o.op != "write" {
		fail(fmt.Errorf("--op: expected read or write, got %q", o.op))
	}
	if o.mode != "saturation" && o.mode != "rate" && o.mode != "hop" {
		fail(fmt.Errorf("--mode: expected saturation, rate or hop, got %q", o.mode))
	}
	return o
}

func fail(err error) {
	line, _ := json.Marshal(map[string]string{"phase": "error", "error": err.Error()})
	fmt.Println(string(line))
	os.Exit(1)
}

func connect(o options) *gocql.Session {
	var hosts []string
	port := 9042
	for _, hp := range strings.Split(o.hosts, ",") {
		host, portText, err := net.SplitHostPort(hp)
		if err != nil {
			fail(fmt.Errorf("--hosts %q: %w", hp, err))
		}
		port, _ = strconv.Atoi(portText) // gocql has one port per cluster; all contact points share it
		hosts = append(hosts, host)
	}
	cluster := gocql.NewCluster(hosts...)
	cluster.Port = port
	cluster.ProtoVersion = 4 // the highest datastax/cql-proxy v0.2.0 speaks: every target gets the same
	cluster.Consistency = gocql.One
	cluster.NumConns = o.conns
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	if o.tokenAware {
		cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	} else {
		cluster.PoolConfig.HostSelectionPolicy = gocql.RoundRobinHostPolicy()
	}
	session, err := cluster.CreateSession()
	if err != nil {
		fail(fmt.Errorf("connect to %s: %w", o.hosts, err))
	}
	return session
}

func setup(s *gocql.Session, o options) {
	ddl := []string{
		fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", o.keyspace, o.replication),
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.kv (k int PRIMARY KEY, v text)", o.keyspace),
	}
	for _, q := range ddl {
		if err := s.Query(q).Exec(); err != nil {
			fail(fmt.Errorf("%s: %w", q, err))
		}
	}
	insert := fmt.Sprintf("INSERT INTO %s.kv (k, v) VALUES (?, ?)", o.keyspace)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := w; k < o.keys; k += 16 {
				if err := s.Query(insert, k, value(k)).Exec(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		fail(err)
	}
	fmt.Println(`{"phase":"setup-done"}`)
}

func value(k int) string { return fmt.Sprintf("value-%08d-%s", k, strings.Repeat("x", 40)) }

// request is one prepared single-partition statement on key k.
type request func(k int) error

func requestFor(s *gocql.Session, o options) request {
	if o.op == "read" {
		q := fmt.Sprintf("SELECT v FROM %s.kv WHERE k = ?", o.keyspace)
		return func(k int) error {
			var v string
			return s.Query(q, k).Scan(&v)
		}
	}
	q := fmt.Sprintf("INSERT INTO %s.kv (k, v) VALUES (?, ?)", o.keyspace)
	return func(k int) error { return s.Query(q, k, value(k)).Exec() }
}

// recorder collects latencies and errors of the measured window; warm-up requests are not recorded.
type recorder struct {
	mu        sync.Mutex
	latencies []time.Duration
	errors    int
	texts     []string
}

func (r *recorder) add(latency time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errors++
		if len(r.texts) < 5 {
			r.texts = append(r.texts, err.Error())
		}
		return
	}
	r.latencies = append(r.latencies, latency)
}

// saturate keeps o.concurrency requests in flight until `until`; each worker its own seeded keys.
func saturate(do request, o options, until time.Time, rec *recorder, seedOffset int64) {
	var wg sync.WaitGroup
	for w := 0; w < o.concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			keys := rand.New(rand.NewSource(o.seed + seedOffset + int64(w)*7919))
			for time.Now().Before(until) {
				k := keys.Intn(o.keys)
				sent := time.Now()
				err := do(k)
				if rec != nil {
					rec.add(time.Since(sent), err)
				}
			}
		}(w)
	}
	wg.Wait()
}

// fixedRate sends request i at start + i/rate whatever the answers do, and measures each latency
// from that intended time. Returns how many requests left later than 1 ms after their time, and
// the latest one's delay.
func fixedRate(do request, o options, start, until time.Time, rec *recorder, seedOffset int64) (int, time.Duration) {
	keys := rand.New(rand.NewSource(o.seed + seedOffset))
	interval := time.Duration(float64(time.Second) / o.rate)
	inFlight := make(chan struct{}, 8192) // bounds goroutines if the target stalls; the wait is still measured
	var wg sync.WaitGroup
	late := 0
	var maxLate time.Duration
	for i := 0; ; i++ {
		intended := start.Add(time.Duration(i) * interval)
		if !intended.Before(until) {
			break
		}
		if d := time.Until(intended); d > 0 {
			time.Sleep(d)
		} else {
			if -d > time.Millisecond {
				late++
			}
			maxLate = max(maxLate, -d)
		}
		inFlight <- struct{}{}
		wg.Add(1)
		k := keys.Intn(o.keys)
		go func() {
			defer wg.Done()
			err := do(k)
			if rec != nil {
				rec.add(time.Since(intended), err)
			}
			<-inFlight
		}()
	}
	wg.Wait()
	return late, maxLate
}

// histogram floors each latency (µs) to its 8 most significant bits: 256 buckets per power of two.
func histogram(sorted []time.Duration) [][2]int64 {
	out := [][2]int64{}
	for _, d := range sorted {
		us := d.Microseconds()
		if shift := bits.Len64(uint64(max(us, 0))) - 8; shift > 0 {
			us = us >> shift << shift
		}
		if n := len(out); n > 0 && out[n-1][0] == us {
			out[n-1][1]++
		} else {
			out = append(out, [2]int64{us, 1})
		}
	}
	return out
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)) * q)
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return float64(sorted[i]) / 1e6
}

func main() {
	o := parse()
	if o.echo != "" {
		serveEcho(o.echo)
		return
	}
	var do request
	if o.mode == "hop" {
		do = hopRequest(o)
	} else {
		session := connect(o)
		defer session.Close()
		if o.setup {
			setup(session, o)
			return
		}
		do = requestFor(session, o)
	}
	measure(do, o)
}

func measure(do request, o options) {
	run := func(from, until time.Time, rec *recorder, seedOffset int64) (int, time.Duration) {
		if o.mode == "saturation" {
			saturate(do, o, until, rec, seedOffset)
			return 0, 0
		}
		return fixedRate(do, o, from, until, rec, seedOffset)
	}
	warmStart := time.Now()
	run(warmStart, warmStart.Add(o.warmup), nil, 1_000_003)

	rec := &recorder{latencies: make([]time.Duration, 0, 1<<16)}
	fmt.Println(`{"phase":"measure"}`)
	cpuBefore := cpuSeconds()
	start := time.Now()
	late, maxLate := run(start, start.Add(o.duration), rec, 0)
	elapsed := time.Since(start).Seconds()
	cpu := cpuSeconds() - cpuBefore

	sort.Slice(rec.latencies, func(i, j int) bool { return rec.latencies[i] < rec.latencies[j] })
	n := len(rec.latencies)
	out := result{
		Phase: "done", Completed: n, Errors: rec.errors, ErrorTexts: rec.texts, Seconds: elapsed,
		OpsPerSec: float64(n) / elapsed, CPUSeconds: cpu, Late: late, MaxLate: float64(maxLate) / 1e6,
		Histogram: histogram(rec.latencies),
		P50:       quantile(rec.latencies, 0.5), P99: quantile(rec.latencies, 0.99), P999: quantile(rec.latencies, 0.999),
	}
	if n > 0 {
		out.Max = float64(rec.latencies[n-1]) / 1e6
	}
	if out.ErrorTexts == nil {
		out.ErrorTexts = []string{}
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
