// Command promql-selectors prints what PromQL expressions read, parsed by Prometheus'
// own parser (the version promtool is built from): for each expression of a JSON array
// of strings read on stdin, the series selectors it contains, each with its metric name
// and the labels the expression needs its series to carry (the selector's matchers and
// the grouping labels of the aggregations and vector matchings around it, less those a
// label_replace or label_join around it writes). The operator's tests compare them
// with a scrape of the operator, so that a rule or a dashboard panel that reads a
// metric or a label the operator does not export fails. Output: a JSON array, one
// {"selectors": [{"metric": ..., "labels": [...]}]} per expression, or {"error": ...}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

type selector struct {
	Metric string   `json:"metric"`
	Labels []string `json:"labels"`
}

type result struct {
	Selectors []selector `json:"selectors,omitempty"`
	Error     string     `json:"error,omitempty"`
}

func main() {
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		fmt.Fprintf(os.Stderr, "promql-selectors: reading a JSON array of expressions on stdin: %v\n", err)
		os.Exit(2)
	}
	out := make([]result, 0, len(exprs))
	for _, text := range exprs {
		out = append(out, selectorsOf(text))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "promql-selectors: %v\n", err)
		os.Exit(1)
	}
}

func selectorsOf(text string) result {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(text)
	if err != nil {
		return result{Error: err.Error()}
	}
	var found []selector
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		need := map[string]bool{}
		for _, m := range vs.LabelMatchers {
			if m.Name != labels.MetricName {
				need[m.Name] = true
			}
		}
		written := map[string]bool{}
		for _, p := range path {
			switch n := p.(type) {
			case *parser.AggregateExpr:
				if !n.Without {
					for _, l := range n.Grouping {
						need[l] = true
					}
				}
			case *parser.BinaryExpr:
				if n.VectorMatching != nil && n.VectorMatching.On {
					for _, l := range n.VectorMatching.MatchingLabels {
						need[l] = true
					}
				}
			case *parser.Call:
				if (n.Func.Name == "label_replace" || n.Func.Name == "label_join") && len(n.Args) > 1 {
					if s, ok := n.Args[1].(*parser.StringLiteral); ok {
						written[s.Val] = true
					}
				}
			}
		}
		names := []string{}
		for l := range need {
			if !written[l] {
				names = append(names, l)
			}
		}
		sort.Strings(names)
		found = append(found, selector{Metric: vs.Name, Labels: names})
		return nil
	})
	return result{Selectors: found}
}
