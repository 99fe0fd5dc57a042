/*
 * cmd_reconcile.c: outboxctl reconcile-artifacts (spec section 6).
 *
 * Placeholder while the command is being built: it refuses to run.
 */
#include "ctl.h"

int cmd_reconcile_artifacts(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	ctl_error("command \"reconcile-artifacts\" is not available in this build");
	return CTL_EXIT_FAILURE;
}
