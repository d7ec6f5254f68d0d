package kube

import (
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"
)

// ValidateCron accepts exactly the standard 5-field cron lines the CronJob
// controller runs: minute hour day-of-month month day-of-week.
func ValidateCron(line string) error {
	if fields := strings.Fields(line); len(fields) != 5 {
		return fmt.Errorf("must be a 5-field cron line such as \"0 2 * * *\", got %d fields in %q", len(fields), line)
	}
	if _, err := cron.ParseStandard(line); err != nil {
		return fmt.Errorf("malformed cron line %q: %v", line, err)
	}
	return nil
}
