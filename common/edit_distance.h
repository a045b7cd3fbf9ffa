/* edit_distance.h - Levenshtein distance for "did you mean ...?" hints
 * (setting names in config/, command-line options in daemon/). */
#ifndef PANOCAP_EDIT_DISTANCE_H
#define PANOCAP_EDIT_DISTANCE_H

/* Edits (insert, delete, substitute) that turn a into b; letters compared
 * ignoring ASCII case when fold_case. Strings longer than 40 characters
 * are never near anything: 99. */
int pc_edit_distance(const char *a, const char *b, int fold_case);

#endif
