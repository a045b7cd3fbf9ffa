/* edit_distance.c - pc_edit_distance (edit_distance.h). */
#include "edit_distance.h"

#include <ctype.h>
#include <string.h>

int pc_edit_distance(const char *a, const char *b, int fold_case)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    int d[41][41];
    for (int i = 0; i <= la; i++)
        d[i][0] = i;
    for (int j = 0; j <= lb; j++)
        d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int ca = (unsigned char)a[i - 1], cb = (unsigned char)b[j - 1];
            if (fold_case) {
                ca = tolower(ca);
                cb = tolower(cb);
            }
            int c = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}
