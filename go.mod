module github.com/cctop/cctop

go 1.26.8

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	golang.org/x/sys v0.49.0
)
