module muster.test/gocql2-check

go 1.24

require github.com/apache/cassandra-gocql-driver/v2 v2.1.2

require (
	github.com/golang/snappy v0.0.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.8 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
)
