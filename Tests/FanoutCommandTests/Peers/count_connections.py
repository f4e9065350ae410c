"""Listens on 127.0.0.1:PORT and appends a line to FILE for each connection it accepts, then
closes it: a test counts the connections a command opened (none, for one refused before any
socket)."""
import socket
import sys

port, path = int(sys.argv[1]), sys.argv[2]
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
while True:
    connection, _ = server.accept()
    with open(path, "a") as counted:
        counted.write("accepted\n")
    connection.close()
