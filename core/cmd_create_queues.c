/*
 * cmd_create_queues.c: outboxctl create-queues (spec section 6).
 *
 * Placeholder while the command is being built: it refuses to run.
 */
#include "ctl.h"

int cmd_create_queues(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	ctl_error("command \"create-queues\" is not available in this build");
	return CTL_EXIT_FAILURE;
}
