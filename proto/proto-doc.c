/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto-doc: print docs/PROTOCOL.md, generated from the message table
 * (proto/schema.c), on stdout. `make proto-doc` writes it into docs/.
 */
#include <stdio.h>

#include "proto.h"

int main(void)
{
    if (proto_doc_write(stdout) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "proto-doc: cannot write the document\n");
        return 1;
    }
    return 0;
}
