package harness

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Result is what one scenario did and what its reader found.
type Result struct {
	Sink, Delivery string
	Copies         int
	// The faults that happened: copies SIGKILLed, SIGTERMed (and restarted), SIGSTOPped past
	// the session; broker SIGKILL-and-restarts.
	Kills, Terms, Stops, BrokerRestarts int
	// Exits are the copies' own exits (errors, crashes), after which they were run again;
	// ZombieExits those right after a SIGCONT (a copy that lost its partitions stopping).
	Exits, ZombieExits int
	// HandedOver and Assigned count the copies' "partitions handed over" and "partitions
	// assigned" log lines.
	HandedOver, Assigned int
	// SlowestStop is the longest a copy took to stop after SIGTERM.
	SlowestStop time.Duration
	// Produced is the records the broker acknowledged to the producer; InputLost those of
	// them that the input topic no longer holds at the end (lost by the broker).
	Produced, ProduceFailed, InputLost int
	Count
	// Kcat is kcat's count of a Kafka sink's output, when kcat ran.
	Kcat *Count
	// Drain says how the copies caught up at the end; FinalLag is the sink's lag after it
	// (`sluice status`; -1: unknown).
	Drain    string
	FinalLag int64
	// Errors make the scenario fail besides its counts; Notes are what else happened.
	Errors, Notes []string
	Dir           string
}

// Failed says whether the scenario lost or corrupted a record, duplicated one under
// exactly_once, or could not run or count.
func (r *Result) Failed() bool {
	return len(r.Errors) > 0 || r.FinalLag != 0 || r.Missing > 0 || r.Extra > 0 || r.InputLost > 0 ||
		(r.Delivery == ExactlyOnce && r.Duplicates > 0)
}

func (r *Result) verdict() string {
	if !r.Failed() {
		return "ok"
	}
	var why []string
	if r.Missing > 0 || r.InputLost > 0 {
		why = append(why, "LOSS")
	}
	if r.Delivery == ExactlyOnce && r.Duplicates > 0 {
		why = append(why, "DUPLICATES")
	}
	if r.Extra > 0 {
		why = append(why, "EXTRA")
	}
	if r.FinalLag != 0 {
		why = append(why, "NOT DRAINED")
	}
	if len(r.Errors) > 0 {
		why = append(why, "ERROR")
	}
	return "**" + strings.Join(why, ", ") + "**"
}

// WriteMarkdown prints the results as the Markdown table RELIABILITY.md keeps, with the
// notes and errors of every scenario below it.
func WriteMarkdown(w io.Writer, cfg Config, results []*Result) {
	fmt.Fprintf(w, "Seed %d, %v per scenario, %d records/s, %d partitions, %d copies per grouped sink (files: 1), %.2g copy faults/min and %.2g broker restarts/min per scenario.\n\n",
		cfg.Seed, cfg.Duration, cfg.Rate, cfg.Partitions, cfg.Copies, cfg.Faults, cfg.BrokerRestarts)
	fmt.Fprintln(w, "| sink | delivery | copies | kills | terms | stops | hand-overs (handed over / assigned) | broker restarts | own exits | slowest stop | rows expected | rows seen | duplicates | missing | extra | result |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var tot Result
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d / %d | %d | %d | %v | %d | %d | %d | %d | %d | %s |\n",
			r.Sink, r.Delivery, r.Copies, r.Kills, r.Terms, r.Stops, r.HandedOver, r.Assigned, r.BrokerRestarts,
			r.Exits, r.SlowestStop.Round(100*time.Millisecond), r.Expected, r.Seen, r.Duplicates, r.Missing, r.Extra, r.verdict())
		tot.Kills, tot.Terms, tot.Stops, tot.BrokerRestarts = tot.Kills+r.Kills, tot.Terms+r.Terms, tot.Stops+r.Stops, tot.BrokerRestarts+r.BrokerRestarts
		tot.HandedOver, tot.Assigned, tot.Exits = tot.HandedOver+r.HandedOver, tot.Assigned+r.Assigned, tot.Exits+r.Exits
		tot.SlowestStop = max(tot.SlowestStop, r.SlowestStop)
		tot.Expected, tot.Seen, tot.Duplicates, tot.Missing, tot.Extra = tot.Expected+r.Expected, tot.Seen+r.Seen, tot.Duplicates+r.Duplicates, tot.Missing+r.Missing, tot.Extra+r.Extra
	}
	fmt.Fprintf(w, "| **total** | | | %d | %d | %d | %d / %d | %d | %d | %v | %d | %d | %d | %d | %d | |\n\n",
		tot.Kills, tot.Terms, tot.Stops, tot.HandedOver, tot.Assigned, tot.BrokerRestarts, tot.Exits,
		tot.SlowestStop.Round(100*time.Millisecond), tot.Expected, tot.Seen, tot.Duplicates, tot.Missing, tot.Extra)
	for _, r := range results {
		fmt.Fprintf(w, "- %s %s: %d records acknowledged to the producer", r.Sink, r.Delivery, r.Produced)
		if r.ProduceFailed > 0 {
			fmt.Fprintf(w, ", %d failed", r.ProduceFailed)
		}
		if r.InputLost > 0 {
			fmt.Fprintf(w, ", **%d of them no longer in the input topic (lost by the broker)**", r.InputLost)
		}
		fmt.Fprintf(w, "; %d zombie exits after SIGCONT; drain: %s", r.ZombieExits, r.Drain)
		if r.Kcat != nil {
			fmt.Fprintf(w, "; kcat (read_committed) saw %d rows, %d duplicates, %d missing", r.Kcat.Seen, r.Kcat.Duplicates, r.Kcat.Missing)
		}
		fmt.Fprintln(w, ".")
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  - error: %s\n", e)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}
