/*
 * cmd_dead.c: outboxctl dead (spec section 6).
 *
 * Placeholder while the command is being built: it refuses to run.
 */
#include "ctl.h"

int cmd_dead(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	ctl_error("command \"dead\" is not available in this build");
	return CTL_EXIT_FAILURE;
}
