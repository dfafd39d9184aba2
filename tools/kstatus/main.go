// Command kstatus prints the kstatus verdict (fluxcd/cli-utils' status.Compute, the
// rules Flux, kpt and cli-utils apply) of each object of a JSON array read on stdin:
// one JSON object per input object, {"status": ..., "message": ...}, as a JSON array
// on stdout. The operator's tests use it to check what Flux makes of its conditions.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type verdict struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	// Raw first: Unstructured's own decoder reads integers as int64, as kstatus needs.
	var objects []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&objects); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: reading a JSON array of objects on stdin: %v\n", err)
		os.Exit(2)
	}
	out := make([]verdict, 0, len(objects))
	for i, raw := range objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: object %d: %v\n", i, err)
			os.Exit(2)
		}
		res, err := status.Compute(u)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: object %d: %v\n", i, err)
			os.Exit(1)
		}
		out = append(out, verdict{Status: res.Status.String(), Message: res.Message})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
		os.Exit(1)
	}
}
