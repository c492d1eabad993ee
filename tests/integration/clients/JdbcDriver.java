// pgjdbc as applications and tools use it: DatabaseMetaData (what IDEs, ORMs and schema
// tools ask), PreparedStatement round trips of common types, ResultSetMetaData. Prints
// everything it saw, deterministically, for the test to compare with PostgreSQL 15's run.
import java.math.BigDecimal;
import java.sql.*;
import java.util.*;
import org.postgresql.util.PGobject;

public class JdbcDriver {
    static String cell(Object o) {
        if (o == null) return "NULL";
        if (o instanceof byte[]) {
            StringBuilder sb = new StringBuilder("bytes:");
            for (byte b : (byte[]) o) sb.append(String.format("%02x", b));
            return sb.toString();
        }
        if (o instanceof Array) {
            try {
                Array a = (Array) o;
                return "array(" + a.getBaseTypeName() + "):" + Arrays.deepToString((Object[]) a.getArray());
            } catch (SQLException e) {
                return "array-error " + e.getSQLState();
            }
        }
        return o.getClass().getSimpleName() + ":" + o;
    }

    static void dump(String title, ResultSet r) throws SQLException {
        ResultSetMetaData m = r.getMetaData();
        StringBuilder head = new StringBuilder("== " + title + " [");
        for (int i = 1; i <= m.getColumnCount(); i++) head.append(i > 1 ? "," : "").append(m.getColumnLabel(i));
        System.out.println(head.append("]"));
        int n = 0;
        while (r.next()) {
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= m.getColumnCount(); i++) sb.append(i > 1 ? " | " : "").append(cell(r.getObject(i)));
            System.out.println(sb);
            n++;
        }
        System.out.println("(" + n + " rows)");
        r.close();
    }

    static void meta(String title, ResultSetMetaData m) throws SQLException {
        System.out.println("== " + title);
        for (int i = 1; i <= m.getColumnCount(); i++) {
            System.out.println(i + " label=" + m.getColumnLabel(i) + " name=" + m.getColumnName(i)
                + " type=" + m.getColumnType(i) + " typename=" + m.getColumnTypeName(i)
                + " class=" + m.getColumnClassName(i) + " precision=" + m.getPrecision(i)
                + " scale=" + m.getScale(i) + " size=" + m.getColumnDisplaySize(i)
                + " nullable=" + m.isNullable(i) + " autoinc=" + m.isAutoIncrement(i)
                + " signed=" + m.isSigned(i) + " table=" + m.getTableName(i)
                + " schema=" + m.getSchemaName(i) + " case=" + m.isCaseSensitive(i));
        }
    }

    interface Step { void run() throws Exception; }

    /** Runs one step; an error is printed (SQLSTATE and message) and the run goes on. */
    static void step(Connection c, String name, Step s) throws SQLException {
        try {
            s.run();
        } catch (SQLException e) {
            System.out.println("!! " + name + ": " + e.getSQLState() + " " + e.getMessage().split("\n")[0]);
            if (!c.getAutoCommit()) c.rollback();
        } catch (Exception e) {
            System.out.println("!! " + name + ": " + e);
            if (!c.getAutoCommit()) c.rollback();
        }
    }

    public static void main(String[] args) throws Exception {
        String t = args[1];
        try (Connection c = DriverManager.getConnection(args[0])) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + t + " (id int PRIMARY KEY, name text NOT NULL, doc jsonb,"
                    + " ts timestamp, amount numeric(12,2), tags text[], data bytea, big bigint, flag boolean,"
                    + " ratio double precision, day date, tstz timestamptz, v varchar(20))");
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + t + "_k (a int, b varchar(10), c numeric, d text NOT NULL, PRIMARY KEY (b, a))");
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + t + "_f (id int PRIMARY KEY REFERENCES " + t + " ON DELETE CASCADE, a int,"
                    + " b varchar(10), FOREIGN KEY (b, a) REFERENCES " + t + "_k ON UPDATE SET NULL)");
            }
            DatabaseMetaData md = c.getMetaData();
            System.out.println("product=" + md.getDatabaseProductName() + " major=" + md.getDatabaseMajorVersion());
            step(c, "getTables", () -> dump("getTables", md.getTables(null, "public", t, null)));
            step(c, "getTables TABLE", () -> dump("getTables TABLE", md.getTables(null, null, t + "%", new String[] {"TABLE"})));
            step(c, "getColumns", () -> dump("getColumns", md.getColumns(null, "public", t, "%")));
            step(c, "getColumns one", () -> dump("getColumns one", md.getColumns(null, null, t, "doc")));
            step(c, "getPrimaryKeys", () -> dump("getPrimaryKeys", md.getPrimaryKeys(null, "public", t)));
            step(c, "getIndexInfo", () -> dump("getIndexInfo", md.getIndexInfo(null, "public", t, false, false)));
            step(c, "getIndexInfo unique", () -> dump("getIndexInfo unique", md.getIndexInfo(null, "public", t, true, true)));
            step(c, "getColumns key", () -> dump("getColumns key", md.getColumns(null, "public", t + "_k", null)));
            step(c, "getPrimaryKeys key", () -> dump("getPrimaryKeys key", md.getPrimaryKeys(null, null, t + "_k")));
            step(c, "getIndexInfo key", () -> dump("getIndexInfo key", md.getIndexInfo(null, null, t + "_k", false, true)));
            step(c, "getBestRowIdentifier", () -> dump("getBestRowIdentifier", md.getBestRowIdentifier(null, "public", t + "_k", DatabaseMetaData.bestRowSession, true)));
            step(c, "getImportedKeys", () -> dump("getImportedKeys", md.getImportedKeys(null, "public", t + "_f")));
            step(c, "getExportedKeys", () -> dump("getExportedKeys", md.getExportedKeys(null, null, t)));
            step(c, "getExportedKeys key", () -> dump("getExportedKeys key", md.getExportedKeys(null, "public", t + "_k")));
            step(c, "getCrossReference", () -> dump("getCrossReference", md.getCrossReference(null, null, t + "_k", null, null, t + "_f")));
            step(c, "getTables VIEW", () -> dump("getTables VIEW", md.getTables(null, null, "%", new String[] {"VIEW"})));
            step(c, "getTableTypes", () -> dump("getTableTypes", md.getTableTypes()));
            step(c, "getSQLKeywords", () -> System.out.println("keywords=" + md.getSQLKeywords()));
            step(c, "getTablePrivileges", () -> dump("getTablePrivileges", md.getTablePrivileges(null, "public", t)));
            step(c, "getColumnPrivileges", () -> dump("getColumnPrivileges", md.getColumnPrivileges(null, "public", t, "i%")));
            step(c, "connection", () -> System.out.println("schema=" + c.getSchema()
                + " readonly=" + c.isReadOnly() + " isolation=" + c.getTransactionIsolation() + " user=" + md.getUserName()));
            step(c, "getSchemas", () -> dump("getSchemas", md.getSchemas()));
            step(c, "getSchemas public", () -> dump("getSchemas public", md.getSchemas(null, "public")));
            step(c, "getTypeInfo", () -> dump("getTypeInfo", md.getTypeInfo()));

            c.setAutoCommit(false);
            String ins = "INSERT INTO " + t + " (id, name, doc, ts, amount, tags, data, big, flag, ratio, day, tstz, v)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
            step(c, "insert", () -> {
                try (PreparedStatement p = c.prepareStatement(ins)) {
                    // Seven executions: pgjdbc switches to a named server-side statement after five.
                    for (int i = 1; i <= 7; i++) {
                        p.setInt(1, i);
                        p.setString(2, "name " + i + (i == 3 ? " \u00e9\u00e8 'q'" : ""));
                        if (i % 2 == 0) {
                            PGobject doc = new PGobject();
                            doc.setType("jsonb");
                            doc.setValue("{\"n\": " + i + ", \"a\": [1, \"x\"], \"b\": {\"z\": null}}");
                            p.setObject(3, doc);
                        } else if (i == 5) {
                            p.setNull(3, Types.OTHER);
                        } else {
                            p.setObject(3, "{\"k\": \"v" + i + "\"}", Types.OTHER);
                        }
                        p.setTimestamp(4, Timestamp.valueOf("2024-0" + i + "-1" + i + " 12:34:56.789"));
                        p.setBigDecimal(5, new BigDecimal(i * 1000 + ".5" + i));
                        p.setArray(6, c.createArrayOf("text", new String[] {"t" + i, "with space", i == 2 ? null : "q\"uote"}));
                        p.setBytes(7, new byte[] {0, (byte) i, (byte) 0xff, 0x5c});
                        p.setLong(8, 9000000000L + i);
                        p.setBoolean(9, i % 3 == 0);
                        p.setDouble(10, i / 4.0);
                        p.setDate(11, java.sql.Date.valueOf("2023-12-0" + i));
                        p.setObject(12, java.time.OffsetDateTime.parse("2024-02-0" + i + "T10:00:00+02:00"));
                        p.setString(13, "v" + i);
                        System.out.println("insert " + i + " -> " + p.executeUpdate());
                    }
                }
                c.commit();
            });
            step(c, "any", () -> {
                try (PreparedStatement p = c.prepareStatement("SELECT * FROM " + t + " WHERE id = ANY(?) ORDER BY id")) {
                    for (int round = 0; round < 6; round++) {
                        p.setArray(1, c.createArrayOf("integer", new Integer[] {2, 3, 5 + round % 2}));
                        ResultSet r = p.executeQuery();
                        if (round == 0) meta("ResultSetMetaData select *", r.getMetaData());
                        dump("any round " + round, r);
                    }
                }
                c.commit();
            });
            step(c, "containment", () -> {
                try (PreparedStatement p = c.prepareStatement(
                        "SELECT id, doc->>'n' AS n, doc, amount * 2 AS dbl, name || '!' AS bang, ts, tags[1] AS first"
                        + " FROM " + t + " WHERE doc @> ?::jsonb OR name = ? ORDER BY id")) {
                    p.setString(1, "{\"a\": [1]}");
                    p.setString(2, "name 1");
                    ResultSet r = p.executeQuery();
                    meta("ResultSetMetaData expressions", r.getMetaData());
                    dump("containment", r);
                }
                c.commit();
            });
            step(c, "aggregate", () -> {
                try (PreparedStatement p = c.prepareStatement("SELECT count(*) AS n, sum(amount) AS total, max(ts) AS last FROM " + t + " WHERE ts > ? AND amount < ?")) {
                    p.setTimestamp(1, Timestamp.valueOf("2024-02-01 00:00:00"));
                    p.setBigDecimal(2, new BigDecimal("6000"));
                    ResultSet r = p.executeQuery();
                    meta("ResultSetMetaData aggregate", r.getMetaData());
                    dump("aggregate", r);
                }
                c.commit();
            });
            step(c, "update", () -> {
                try (PreparedStatement p = c.prepareStatement("UPDATE " + t + " SET doc = ?, tags = ? WHERE id = ?")) {
                    p.setObject(1, "{\"updated\": true}", Types.OTHER);
                    p.setArray(2, c.createArrayOf("varchar", new String[] {"u"}));
                    p.setInt(3, 1);
                    System.out.println("update -> " + p.executeUpdate());
                }
                c.commit();
            });
            step(c, "batch", () -> {
                try (PreparedStatement p = c.prepareStatement("INSERT INTO " + t + " (id, name, amount, day) VALUES (?, ?, ?, ?)")) {
                    for (int i = 20; i < 25; i++) {
                        p.setInt(1, i);
                        p.setString(2, "batch " + i);
                        if (i == 22) p.setNull(3, Types.NUMERIC); else p.setBigDecimal(3, new BigDecimal(i + ".125"));
                        p.setObject(4, java.time.LocalDate.of(2020, 2, i + 4 > 29 ? 29 : i + 4));
                        p.addBatch();
                    }
                    System.out.println("batch -> " + Arrays.toString(p.executeBatch()));
                }
                c.commit();
            });
            step(c, "generated keys", () -> {
                try (PreparedStatement p = c.prepareStatement("INSERT INTO " + t + " (id, name, ts) VALUES (?, ?, ?)", Statement.RETURN_GENERATED_KEYS)) {
                    p.setInt(1, 30);
                    p.setString(2, "returning");
                    p.setObject(3, java.time.LocalDateTime.of(2021, 3, 4, 5, 6, 7, 890000000));
                    System.out.println("generated -> " + p.executeUpdate());
                    dump("generated keys", p.getGeneratedKeys());
                }
                c.commit();
            });
            step(c, "duplicate key", () -> {
                try (PreparedStatement p = c.prepareStatement("INSERT INTO " + t + " (id, name) VALUES (?, ?)")) {
                    p.setInt(1, 30);
                    p.setString(2, "again");
                    p.executeUpdate();
                }
            });
            step(c, "after duplicate", () -> {
                try (Statement s = c.createStatement()) {
                    dump("after duplicate", s.executeQuery("SELECT count(*) FROM " + t));
                }
                c.commit();
            });
            step(c, "fetch size", () -> {
                // autocommit off and a fetch size: pgjdbc reads through a portal, 2 rows per Execute
                try (PreparedStatement p = c.prepareStatement("SELECT id, name FROM " + t + " WHERE id > ? ORDER BY id")) {
                    p.setFetchSize(2);
                    p.setInt(1, 2);
                    dump("fetch size", p.executeQuery());
                }
                c.commit();
            });
            step(c, "savepoint", () -> {
                Savepoint sp = c.setSavepoint("before_bad");
                try (Statement s = c.createStatement()) {
                    s.execute("INSERT INTO " + t + " (id, name) VALUES (40, 'kept')");
                    sp = c.setSavepoint("after_good");
                    s.execute("INSERT INTO " + t + " (id, name) VALUES (40, 'duplicate')");
                } catch (SQLException e) {
                    System.out.println("savepoint error " + e.getSQLState());
                    c.rollback(sp);
                }
                c.commit();
            });
            step(c, "query timeout", () -> {
                try (Statement s = c.createStatement()) {
                    s.setQueryTimeout(1);
                    s.execute("SELECT pg_sleep(5)");
                } catch (SQLException e) {
                    System.out.println("timeout " + e.getSQLState() + " " + e.getMessage());
                    c.rollback();
                }
            });
            step(c, "serializable", () -> {
                c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
                try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SHOW transaction_isolation")) {
                    r.next();
                    System.out.println("isolation " + c.getTransactionIsolation() + " " + r.getString(1));
                }
                c.commit();
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            });
            step(c, "final", () -> {
                try (Statement s = c.createStatement()) {
                    dump("final", s.executeQuery("SELECT id, doc, tags, data FROM " + t + " ORDER BY id"));
                }
                c.commit();
            });
        }
    }
}
