/*
 * cmd_ingest_window.c: outboxctl ingest-window (spec section 6).
 *
 * Placeholder while the command is being built: it refuses to run.
 */
#include "ctl.h"

int cmd_ingest_window(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	ctl_error("command \"ingest-window\" is not available in this build");
	return CTL_EXIT_FAILURE;
}
