// pgjdbc with autocommit off, as applications use it: a statement fails, the application
// rolls back (pgjdbc sends ROLLBACK through Parse/Bind/Execute) and carries on. Prints what
// it saw, line by line, for the test to compare with PostgreSQL 15's run.
import java.sql.*;

public class TxErrors {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0])) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS jdbc_tx");
                s.execute("CREATE TABLE jdbc_tx (id int)");
            }
            c.setAutoCommit(false);
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO jdbc_tx VALUES (?)")) {
                for (int round = 0; round < 3; round++) {
                    // Several executions: pgjdbc switches to a named server-side statement.
                    for (int i = 0; i < 6; i++) {
                        ins.setInt(1, round * 10 + i);
                        ins.executeUpdate();
                    }
                    try (Statement s = c.createStatement()) {
                        s.executeQuery("SELECT 1/0");
                    } catch (SQLException e) {
                        System.out.println("error " + e.getSQLState());
                    }
                    try {
                        ins.setInt(1, 99);
                        ins.executeUpdate();
                    } catch (SQLException e) {
                        System.out.println("then " + e.getSQLState());
                    }
                    c.rollback();
                    ins.setInt(1, round);
                    ins.executeUpdate();
                    c.commit();
                }
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT count(*), sum(id) FROM jdbc_tx")) {
                r.next();
                System.out.println("rows=" + r.getLong(1) + " sum=" + r.getLong(2));
            }
            c.commit();
        }
    }
}
