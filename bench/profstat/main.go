// Command profstat prints what a cctop profile holds: samples, calling
// contexts (nodes of the tree, the root included), the share of samples in
// [other] nodes, and the comments about cctop's memory bounds and ingest.
// The soak script reads it to check the tree stayed under --max-nodes,
// bench/firstbatch.sh for the longest batch and the records lost.
//
// usage: go run ./bench/profstat FILE
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cctop/cctop/cct"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: profstat FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "profstat:", err)
		os.Exit(1)
	}
	defer f.Close()
	t, meta, err := cct.ReadProfile(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "profstat: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	other, total := t.OtherSamples(), t.Total().Samples
	fmt.Printf("samples %d contexts %d other %.2f%%", total, t.Len(), 100*float64(other)/float64(max(total, 1)))
	for _, c := range meta.Comments {
		if strings.HasPrefix(c, "max_") || strings.HasPrefix(c, "ingest=") || strings.HasPrefix(c, "lost_records=") {
			fmt.Printf(" %s", c)
		}
	}
	fmt.Println()
}
