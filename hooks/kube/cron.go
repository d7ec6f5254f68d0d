package kube

import (
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"

	"metahooks/hooks/composite"
)

// MaxCronLength is the longest cron line a parent may set (the CRDs'
// maxLength of spec.backup.schedule and spec.backupSchedule). A standard
// line is a few dozen characters; the longest sensible one, every minute
// listed, "0,1,2,...,59 * * * *", has 179. The bound comes before any
// parsing, so a 1 MB line (which the API server would store) costs one
// comparison rather than tens of megabytes.
const MaxCronLength = 256

// maxCronReason bounds the parser's own message quoted in ValidateCron's
// error: it quotes the piece it failed on.
const maxCronReason = 128

// ValidateCron accepts exactly the standard 5-field cron lines the CronJob
// controller runs: minute hour day-of-month month day-of-week, of at most
// MaxCronLength characters. Parsing is linear in the line: every list item,
// range or step sets at most 60 bits of one field.
func ValidateCron(line string) error {
	if len(line) > MaxCronLength {
		return fmt.Errorf("must be at most %d characters, got %d: %s", MaxCronLength, len(line), composite.Quote(line))
	}
	if fields := strings.Fields(line); len(fields) != 5 {
		return fmt.Errorf("must be a 5-field cron line such as \"0 2 * * *\", got %d fields in %s", len(fields), composite.Quote(line))
	}
	if _, err := cron.ParseStandard(line); err != nil {
		reason := err.Error()
		if len(reason) > maxCronReason {
			reason = reason[:maxCronReason] + "…"
		}
		return fmt.Errorf("malformed cron line %s: %s", composite.Quote(line), reason)
	}
	return nil
}
