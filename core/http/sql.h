/*
 * sql.h - POST /v1/sql (admin; docs/HTTP.md, "SQL"): runs DDL statements
 * as `loams-host sql --json` does (sql/ddl_exec.h) and answers
 *
 *   {"results": [<the JSON of each statement>, ...]}
 *
 * With ?print=json also "printed": what `loams-host sql --json` prints;
 * with ?print=text the statements run as `loams-host sql` runs them,
 * results is [] and "printed" is its text (what `sql --server` prints;
 * an error's detail then has the text printed before it).
 *
 * The body is the statements (text/plain, application/sql, no type, or
 * curl's default application/x-www-form-urlencoded taken as text),
 * or a JSON object {"sql": "..."} (application/json).  A statement that
 * does not parse is 400 bad_sql with its line and column and nothing
 * runs; statements run in order and the first that fails stops the rest:
 * its error says which (detail: statement, line, column, and the results
 * of those before it, which took effect).  With a token of one namespace,
 * every object a statement names must be in it, and SELECT * FROM
 * system.* needs a token of '*'.
 */
#ifndef LOAMS_HTTP_SQL_H
#define LOAMS_HTTP_SQL_H

#include "http/router.h"

/* Adds the route.  Errors: those of loams_http_router_add. */
int loams_http_sql_routes(loams_http_router *r);

#endif
