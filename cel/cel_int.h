/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cel/cel_int.h - what the two halves of the CEL evaluator share and
 * nothing outside cel/ includes: the syntax tree parse.c builds and
 * eval.c walks, and the token kinds (a binary node's operator is one).
 * Ownership: a node owns its name, literal, operands and argument array;
 * cel_free frees the whole tree.
 */
#ifndef CUEUE_CEL_INT_H
#define CUEUE_CEL_INT_H

#include "cel/cel.h"

enum cel__nkind {
	CEL_N_LIT,
	CEL_N_IDENT,
	CEL_N_SELECT, /* a.name */
	CEL_N_HAS,    /* has(a.name) */
	CEL_N_INDEX,  /* a[b] */
	CEL_N_CALL,   /* name(args) or a.name(args) */
	CEL_N_MACRO,  /* a.all(x, e) ... */
	CEL_N_LIST,
	CEL_N_NOT,
	CEL_N_NEG,
	CEL_N_BIN,
	CEL_N_AND,
	CEL_N_OR,
	CEL_N_COND,
};

struct cel__node {
	enum cel__nkind kind;
	int op; /* CEL_N_BIN: a token */
	char *name;
	json_t *lit;
	struct cel__node *a, *b, *c; /* operands; a = target of a method */
	struct cel__node **args;
	size_t nargs;
};

struct cel_expr {
	struct cel__node *root;
	bool uses_old;
};

enum cel__tok {
	CEL_T_END,
	CEL_T_IDENT,
	CEL_T_INT,
	CEL_T_DOUBLE,
	CEL_T_STR,
	CEL_T_EQ,
	CEL_T_NE,
	CEL_T_LT,
	CEL_T_LE,
	CEL_T_GT,
	CEL_T_GE,
	CEL_T_AND,
	CEL_T_OR,
	CEL_T_IN,
	CEL_T_PUNCT, /* one character, in .c */
	CEL_T_ERR,
};

#endif
