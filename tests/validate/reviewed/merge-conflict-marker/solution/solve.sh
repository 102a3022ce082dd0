#!/bin/bash
sed -i 's/^max_connections = .*/max_connections = 200/' /app/config/server.ini
