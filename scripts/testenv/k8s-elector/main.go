// k8s-elector takes part in a client-go leader election on a coordination.k8s.io/v1 Lease and
// reports what happens as JSON lines on stdout, one per event:
//
//	{"event":"started-leading","identity":"a","time":"..."}
//	{"event":"new-leader","identity":"b","time":"..."}
//	{"event":"stopped-leading","identity":"a","time":"..."}
//
// The integration tests run it next to Muster's TypeScript Lease lock to show that both honour
// the same Lease protocol. SIGTERM/SIGINT end it; with --release-on-cancel (the default) a held
// lease is released first. Diagnostics go to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

type event struct {
	Event    string `json:"event"`
	Identity string `json:"identity,omitempty"`
	Lease    string `json:"lease,omitempty"`
	Error    string `json:"error,omitempty"`
	Time     string `json:"time"`
}

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout)
)

func emit(e event) {
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	outMu.Lock()
	defer outMu.Unlock()
	_ = out.Encode(e)
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "path of the kubeconfig file")
	namespace := flag.String("namespace", "default", "namespace of the Lease")
	name := flag.String("name", "", "name of the Lease (required)")
	identity := flag.String("identity", "", "this candidate's identity (required)")
	leaseDuration := flag.Duration("lease-duration", 15*time.Second, "how long a lease is valid without renewal")
	renewDeadline := flag.Duration("renew-deadline", 10*time.Second, "how long the leader keeps retrying renewal before it gives up")
	retryPeriod := flag.Duration("retry-period", 2*time.Second, "wait between attempts to acquire or renew")
	releaseOnCancel := flag.Bool("release-on-cancel", true, "release the lease when stopped by a signal")
	once := flag.Bool("once", false, "exit after losing leadership instead of running for election again")
	flag.Parse()
	if *name == "" || *identity == "" {
		fmt.Fprintln(os.Stderr, "k8s-elector: --name and --identity are required")
		flag.Usage()
		os.Exit(2)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: *namespace, Name: *name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *identity},
	}
	lease := *namespace + "/" + *name
	config := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            *name,
		LeaseDuration:   *leaseDuration,
		RenewDeadline:   *renewDeadline,
		RetryPeriod:     *retryPeriod,
		ReleaseOnCancel: *releaseOnCancel,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				emit(event{Event: "started-leading", Identity: *identity, Lease: lease})
			},
			OnStoppedLeading: func() {
				emit(event{Event: "stopped-leading", Identity: *identity, Lease: lease})
			},
			OnNewLeader: func(leader string) {
				emit(event{Event: "new-leader", Identity: leader, Lease: lease})
			},
		},
	}
	elector, err := leaderelection.NewLeaderElector(config)
	if err != nil {
		fail(err)
	}

	emit(event{Event: "candidate", Identity: *identity, Lease: lease})
	for {
		elector.Run(ctx) // returns when leadership is lost or ctx ends
		if ctx.Err() != nil || *once {
			break
		}
	}
	emit(event{Event: "exited", Identity: *identity, Lease: lease})
}

func fail(err error) {
	emit(event{Event: "error", Error: err.Error()})
	os.Exit(1)
}
