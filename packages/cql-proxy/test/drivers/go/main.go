// steady-load sends a steady load through the proxies with gocql's defaults (no retry policy,
// statements not idempotent) until stdin closes, then prints {"ok": N, "failed": N, "errors": [...]}.
//
// Usage: steady-load HOST:PORT RATE
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

type report struct {
	Ok         int      `json:"ok"`
	Failed     int      `json:"failed"`
	Unanswered int      `json:"unanswered"`
	Errors     []string `json:"errors"`
}

func main() {
	host, portText, err := net.SplitHostPort(os.Args[1])
	if err != nil {
		panic(err)
	}
	port, _ := strconv.Atoi(portText)
	rate, _ := strconv.ParseFloat(os.Args[2], 64)
	cluster := gocql.NewCluster(host)
	cluster.Port = port
	session, err := cluster.CreateSession()
	if err != nil {
		fmt.Printf("{\"error\": %q}\n", err.Error())
		os.Exit(1)
	}
	defer session.Close()

	var mu sync.Mutex
	var wg sync.WaitGroup
	out := report{Errors: []string{}}
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
			err := session.Query("INSERT INTO muster_drain.kv (k, v) VALUES (?, ?)", i%1000, i).Exec()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				out.Ok++
			} else {
				out.Failed++
				if len(out.Errors) < 20 {
					out.Errors = append(out.Errors, err.Error())
				}
			}
		}(i)
		due := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		time.Sleep(time.Until(due))
	}
}
