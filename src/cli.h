/*
 * cli.h: what the `fieldstore` binary's commands share (main.c, the
 * server; check_index.c, `fieldstore check-index`; node_lock.c, the data
 * directory's lock).
 */
#ifndef FDS_CLI_H
#define FDS_CLI_H

/* Hold an exclusive lock on DATA/node.lock for the life of the process
 * (node_lock.c), creating DATA if needed, so that no second server or offline
 * command opens the same data directory.  Returns 0, or 1 after printing
 * why on stderr (the holder's pid when another process has it). */
int fds_cli_lock_data_dir(const char *data);

/* `fieldstore check-index ...` (check_index.c): argv[0] is
 * "check-index".  Returns the exit status. */
int fds_check_index_main(int argc, char **argv);

#endif
