/* main.c: the asgd command line; dispatches subcommands to the library. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/experiment.h"
#include "core/run.h"
#include "core/sequential.h"

static const char s_usage[] =
    "usage: asgd COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  train CONFIG [section.key=value ...]   run an experiment; prints its run folder\n"
    "  help [config [CONFIG]]                 this text; or every config key with\n"
    "                                         its resolved value\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or config error\n";

static int s_fail(const error *err)
{
    fprintf(stderr, "asgd: %s\n", err->msg);
    return err->status ? err->status : ERROR_RUNTIME;
}

static int s_train(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "asgd train: missing CONFIG\n%s", s_usage);
        return ERROR_USAGE;
    }
    error err = {0};
    experiment e;
    if (experiment_configure(&e, argv[0], argc - 1, argv + 1, &err) < 0) {
        return s_fail(&err);
    }
    run r;
    int rc = -1;
    if (experiment_load(&e, &err) == 0 &&
        run_create(&r, e.c, e.out_root, e.name, e.run_id, &err) == 0) {
        rc = sequential_train(&e, &r, &err);
        run_close(&r);
    }
    experiment_destroy(&e);
    if (rc < 0) {
        return s_fail(&err);
    }
    printf("%s\n", r.dir);
    return 0;
}

/* `asgd help config [CONFIG]`: the resolved config, defaults included. */
static int s_help_config(const char *path)
{
    error err = {0};
    experiment e;
    if (experiment_configure(&e, path, 0, NULL, &err) < 0) {
        return s_fail(&err);
    }
    int rc = config_write(e.c, "/dev/stdout", &err);
    experiment_destroy(&e);
    return rc < 0 ? s_fail(&err) : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(s_usage, stderr);
        return ERROR_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "train") == 0) {
        return s_train(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc >= 3 && strcmp(argv[2], "config") == 0) {
            return s_help_config(argc >= 4 ? argv[3] : NULL);
        }
        fputs(s_usage, stdout);
        return 0;
    }
    fprintf(stderr, "asgd: unknown command \"%s\"\n%s", cmd, s_usage);
    return ERROR_USAGE;
}
