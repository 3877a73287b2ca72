/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/flags.h - cueue-controller's command line: its own options
 * and the flags of Kueue's manager (cmd/kueue: --config, --feature-gates,
 * --kubeconfig and controller-runtime's --zap-*), each with Kueue's
 * meaning, so that a Kueue Deployment with only its image swapped starts.
 * Pure: parses argv into a struct; main.c acts on it.
 *
 * As Go's flag package does, a flag may be written -name or --name, its
 * value as -name=VALUE or -name VALUE (a boolean only as -name or
 * -name=BOOL), and "--" ends the flags. An unknown flag is refused with
 * the list of accepted ones; an argument that is not a flag is refused.
 */
#ifndef CUEUE_CONTROLLER_FLAGS_H
#define CUEUE_CONTROLLER_FLAGS_H

#include <jansson.h>
#include <stdbool.h>

#include "lib/cu.h"

enum ctl_flags_action {
	CTL_FLAGS_RUN,
	CTL_FLAGS_HELP,
	CTL_FLAGS_VERSION,
	CTL_FLAGS_COMPAT_TABLE,
	CTL_FLAGS_CHECK_CONFIG,
	CTL_FLAGS_CONVERT_CONFIG,
};

struct ctl_flags {
	enum ctl_flags_action action;
	/* [borrowed] from argv, NULL when not given. No --config: Kueue's
	 * defaults (an empty Configuration). */
	const char *config;
	const char *kubeconfig;
	const char *store;
	const char *convert;
	/* [borrowed] --feature-gates "Name=bool,..." as given; checked by
	 * ctl_flags_gates. */
	const char *feature_gates;
	bool metrics_secure;
	/* Logging: what the flags chose (level_set / json_set false: the
	 * default, info and text). */
	bool level_set;
	enum cu_log_level level;
	bool json_set;
	bool json;
};

/*
 * Parse argv[1..argc-1] into *out. Errors (CU_EINVAL, exit status 2 in
 * main) name the flag and what to write instead; an unknown flag's
 * message lists the accepted flags.
 */
int ctl_flags_parse(
    int argc, const char *const *argv, struct ctl_flags *out, cu_error *err);

/*
 * --feature-gates "A=true,B=false" (spaces around items allowed, Go's
 * boolean spellings: 1 t T TRUE true True 0 f F FALSE false False) as a
 * JSON object {"A": true, "B": false} into *out [owned]. An empty string
 * is an empty object. Errors name the item.
 */
int ctl_flags_gates(const char *spec, json_t **out, cu_error *err);

/* The accepted flags, one per line with a short help (for --help). */
extern const char ctl_flags_help[];

#endif
