// One loopback hop, measured the way the CQL phases are: -mode hop sends 8-byte messages at -rate to
// an echo process (cql-load -echo, pinned where a proxy would run) over one TCP connection and
// records each round trip from its intended send time. A proxy puts one such round trip (client to
// proxy and back) in front of the one to Cassandra, so this is the floor of what it can add.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// serveEcho answers every connection's bytes with the same bytes until it closes; never returns.
func serveEcho(addr string) {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		fail(fmt.Errorf("--echo %s: %w", addr, err))
	}
	fmt.Println(`{"phase":"listening"}`)
	for {
		conn, err := listener.Accept()
		if err != nil {
			fail(err)
		}
		go func() {
			defer conn.Close()
			buf := make([]byte, 4096)
			for {
				n, err := conn.Read(buf)
				if n > 0 {
					if _, werr := conn.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// hopRequest returns a request that sends one message to the echo process at o.hosts and waits for
// it to come back; requests in flight share the connection, told apart by a sequence number.
func hopRequest(o options) request {
	conn, err := net.Dial("tcp", o.hosts)
	if err != nil {
		fail(fmt.Errorf("connect to the echo process %s: %w", o.hosts, err))
	}
	var (
		mu      sync.Mutex
		waiting = map[uint64]chan struct{}{}
		next    atomic.Uint64
		closed  = errors.New("the echo connection closed")
	)
	go func() {
		var msg [8]byte
		for {
			if _, err := io.ReadFull(conn, msg[:]); err != nil {
				fail(closed)
			}
			mu.Lock()
			done := waiting[binary.BigEndian.Uint64(msg[:])]
			mu.Unlock()
			if done != nil {
				close(done)
			}
		}
	}()
	return func(int) error {
		id := next.Add(1)
		done := make(chan struct{})
		var msg [8]byte
		binary.BigEndian.PutUint64(msg[:], id)
		mu.Lock()
		waiting[id] = done
		_, err := conn.Write(msg[:])
		mu.Unlock()
		if err != nil {
			return err
		}
		<-done
		mu.Lock()
		delete(waiting, id)
		mu.Unlock()
		return nil
	}
}
