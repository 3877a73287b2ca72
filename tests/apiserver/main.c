/* SPDX-License-Identifier: Apache-2.0 */
/* placeholder replaced by the apiserver implementation */
#include <stdio.h>
int main(void)
{
	fputs("cueue-apiserver: not built yet\n", stderr);
	return 2;
}
