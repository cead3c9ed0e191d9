// steady-load sends a steady load through the proxies until stdin closes, then prints
// {"ok": N, "failed": N, "kinds": {...}, "errors": [...]}.
//
// Usage: steady-load HOST:PORT RATE [retry]
//
// By default gocql's defaults apply (no retry policy, statements not idempotent), as in an
// application that never tuned them. With "retry" the statements are marked idempotent and the
// session retries on the next host (SimpleRetryPolicy, 3 retries): the remedy the proxy's README
// gives for gocql. Each failure is reported with the host it was sent to and when (Unix ms), so a
// drain's losses can be put beside the proxies' logs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

type report struct {
	Ok     int            `json:"ok"`
	Failed int            `json:"failed"`
	Kinds  map[string]int `json:"kinds"`
	Errors []string       `json:"errors"`
	// Examples holds the first failure of each kind.
	Examples map[string]string `json:"examples"`
}

// lastFailure keeps a query's last failed attempt: the host and the time Exec's error does not say.
type lastFailure struct {
	attempt gocql.ObservedQuery
	seen    bool
}

func (f *lastFailure) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	if q.Err != nil {
		f.attempt, f.seen = q, true
	}
}

// kind names an error the way the drain's analysis needs: which path of the driver failed it.
func kind(err error) string {
	switch {
	case errors.Is(err, gocql.ErrConnectionClosed):
		return "ErrConnectionClosed"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, gocql.ErrNoConnections):
		return "ErrNoConnections"
	case errors.Is(err, gocql.ErrTimeoutNoResponse):
		return "ErrTimeoutNoResponse"
	}
	var request gocql.RequestError
	if errors.As(err, &request) {
		return fmt.Sprintf("RequestError 0x%04x", request.Code())
	}
	return fmt.Sprintf("%T", err)
}

func main() {
	host, portText, err := net.SplitHostPort(os.Args[1])
	if err != nil {
		panic(err)
	}
	port, _ := strconv.Atoi(portText)
	rate, _ := strconv.ParseFloat(os.Args[2], 64)
	retry := len(os.Args) > 3 && os.Args[3] == "retry"
	cluster := gocql.NewCluster(host)
	cluster.Port = port
	cluster.Logger = log.New(os.Stderr, "gocql ", log.Lmicroseconds)
	if retry {
		cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
	}
	session, err := cluster.CreateSession()
	if err != nil {
		fmt.Printf("{\"error\": %q}\n", err.Error())
		os.Exit(1)
	}
	defer session.Close()

	var mu sync.Mutex
	var wg sync.WaitGroup
	out := report{Kinds: map[string]int{}, Errors: []string{}, Examples: map[string]string{}}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	fmt.Println(`{"started": true}`)
	start := time.Now()
	for i := 1; ; i++ {
		select {
		case <-stop:
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
			}
			mu.Lock()
			line, _ := json.Marshal(out)
			mu.Unlock()
			fmt.Println(string(line))
			return
		default:
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			failure := &lastFailure{}
			query := session.Query("INSERT INTO muster_drain.kv (k, v) VALUES (?, ?)", i%1000, i).Observer(failure)
			if retry {
				query.Idempotent(true)
			}
			err := query.Exec()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				out.Ok++
				return
			}
			out.Failed++
			out.Kinds[kind(err)]++
			where := "no attempt"
			if failure.seen {
				a := failure.attempt
				where = fmt.Sprintf("host %s sent %d failed %d", a.Host.ConnectAddressAndPort(), a.Start.UnixMilli(), a.End.UnixMilli())
			}
			described := fmt.Sprintf("%s: %s (%s)", kind(err), err.Error(), where)
			if len(out.Errors) < 20 {
				out.Errors = append(out.Errors, described)
			}
			if _, ok := out.Examples[kind(err)]; !ok {
				out.Examples[kind(err)] = described
			}
		}(i)
		due := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		time.Sleep(time.Until(due))
	}
}
